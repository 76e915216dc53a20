from datetime import date

from tally.records import Sale
from tally.summary import daily_totals, total_revenue, units_by_sku

SALES = [
    Sale(date(2024, 3, 5), "TEA-12", 1, 425),
    Sale(date(2024, 3, 4), "MUG-01", 2, 850),
    Sale(date(2024, 3, 4), "TEA-12", 3, 425),
    Sale(date(2024, 3, 5), "DISCOUNT", 1, -100),
]


def test_total_revenue_counts_discounts_as_negative():
    assert total_revenue(SALES) == 425 + 1700 + 1275 - 100


def test_total_revenue_of_no_sales_is_zero():
    assert total_revenue([]) == 0


def test_units_by_sku_is_keyed_alphabetically():
    units = units_by_sku(SALES)
    assert units == {"DISCOUNT": 1, "MUG-01": 2, "TEA-12": 4}
    assert list(units) == ["DISCOUNT", "MUG-01", "TEA-12"]


def test_daily_totals_are_in_chronological_order():
    totals = daily_totals(SALES)
    assert totals == {date(2024, 3, 4): 1700 + 1275, date(2024, 3, 5): 425 - 100}
    assert list(totals) == [date(2024, 3, 4), date(2024, 3, 5)]
