"""Totals over a list of sales."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

from tally.records import Sale


def total_revenue(sales: Iterable[Sale]) -> int:
    """Sum of the revenue of all sales, in cents (discount lines count negative)."""
    return sum(sale.revenue for sale in sales)


def units_by_sku(sales: Iterable[Sale]) -> dict[str, int]:
    """Units sold per SKU, keyed in alphabetical order of SKU."""
    units: dict[str, int] = {}
    for sale in sales:
        units[sale.sku] = units.get(sale.sku, 0) + sale.quantity
    return dict(sorted(units.items()))


def daily_totals(sales: Iterable[Sale]) -> dict[date, int]:
    """Revenue per day in cents, keyed in chronological order.

    Days without sales are left out.
    """
    totals: dict[date, int] = {}
    for sale in sales:
        totals[sale.day] = totals.get(sale.day, 0) + sale.revenue
    return dict(sorted(totals.items()))
