"""Ranking products against each other."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from tally.records import Sale


@dataclass
class _Tally:
    units: int = 0
    revenue: int = 0

    def rank_key(self, sku: str) -> tuple[int, int, str]:
        # Most units first, then most revenue, then plain string order of the SKU.
        return (-self.units, -self.revenue, sku)


def top_products(sales: Iterable[Sale], n: int = 3) -> list[tuple[str, int]]:
    """Return the ``n`` best-selling products as ``(sku, units_sold)`` pairs, best first.

    Products are ranked by the number of units sold. When two products sold the same
    number of units, the one that brought in more revenue ranks higher; when that is
    equal too, SKUs are taken in plain string order (so ``"Zest"`` comes before
    ``"apple"``). Fewer than ``n`` pairs come back when fewer products were sold.
    """
    tallies: defaultdict[str, _Tally] = defaultdict(_Tally)
    for sale in sales:
        entry = tallies[sale.sku]
        entry.units += sale.quantity
        entry.revenue += sale.revenue
    best = sorted(tallies.items(), key=lambda item: item[1].rank_key(item[0]))
    return [(sku, entry.units) for sku, entry in best[:n]]
