"""Totals over a list of sales."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from datetime import date
from typing import TypeVar

from tally.records import Sale

_K = TypeVar("_K", bound=Hashable)


def _grouped(
    sales: Iterable[Sale], key: Callable[[Sale], _K], amount: Callable[[Sale], int]
) -> Counter[_K]:
    totals: Counter[_K] = Counter()
    for sale in sales:
        totals[key(sale)] += amount(sale)
    return totals


def total_revenue(sales: Iterable[Sale]) -> int:
    """Sum of the revenue of all sales, in cents (discount lines count negative)."""
    return sum(_grouped(sales, lambda sale: 0, lambda sale: sale.revenue).values())


def units_by_sku(sales: Iterable[Sale]) -> dict[str, int]:
    """Units sold per SKU, keyed in alphabetical order of SKU."""
    units = _grouped(sales, lambda sale: sale.sku, lambda sale: sale.quantity)
    return {sku: units[sku] for sku in sorted(units)}


def daily_totals(sales: Iterable[Sale]) -> dict[date, int]:
    """Revenue per day in cents, keyed in chronological order.

    Days without sales are left out.
    """
    totals = _grouped(sales, lambda sale: sale.day, lambda sale: sale.revenue)
    return {day: totals[day] for day in sorted(totals)}


def weekly_totals(sales: Iterable[Sale]) -> dict[str, int]:
    """Revenue per ISO 8601 week in cents, keyed like ``"2024-W05"``, in chronological order.

    Weeks run Monday to Sunday and belong to their ISO week-numbering year, which can differ
    from the calendar year around New Year: 30 December 2024 is in ``"2025-W01"``. Weeks
    without sales are left out.
    """
    totals = _grouped(sales, lambda sale: sale.day.isocalendar()[:2], lambda sale: sale.revenue)
    return {f"{year:04d}-W{week:02d}": totals[year, week] for year, week in sorted(totals)}
