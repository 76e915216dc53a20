"""Spec tests for summary.weekly_totals, the feature the task asks for."""

from datetime import date

from tally import summary
from tally.records import Sale


def sale(day, quantity=1, unit_price=100, sku="MUG-01"):
    return Sale(day, sku, quantity, unit_price)


def test_a_week_runs_monday_to_sunday():
    sales = [sale(date(2024, 3, 4)), sale(date(2024, 3, 10)), sale(date(2024, 3, 11))]
    assert summary.weekly_totals(sales) == {"2024-W10": 200, "2024-W11": 100}


def test_week_numbers_have_two_digits():
    assert list(summary.weekly_totals([sale(date(2024, 1, 31))])) == ["2024-W05"]


def test_late_december_can_belong_to_week_one_of_the_next_year():
    assert summary.weekly_totals([sale(date(2024, 12, 30))]) == {"2025-W01": 100}


def test_early_january_can_belong_to_the_last_week_of_the_previous_year():
    assert summary.weekly_totals([sale(date(2021, 1, 3))]) == {"2020-W53": 100}


def test_totals_are_revenue_including_discounts():
    day = date(2024, 3, 5)
    sales = [sale(day, 2, 850), sale(day, 1, -100, sku="DISCOUNT")]
    assert summary.weekly_totals(sales) == {"2024-W10": 1600}


def test_weeks_come_in_chronological_order_whatever_the_input_order():
    sales = [sale(date(2025, 1, 8)), sale(date(2024, 3, 4)), sale(date(2024, 12, 30))]
    assert list(summary.weekly_totals(sales)) == ["2024-W10", "2025-W01", "2025-W02"]


def test_weeks_without_sales_are_left_out():
    sales = [sale(date(2024, 3, 4)), sale(date(2024, 3, 25))]
    assert list(summary.weekly_totals(sales)) == ["2024-W10", "2024-W13"]


def test_no_sales_means_no_weeks():
    assert summary.weekly_totals([]) == {}


def test_any_iterable_of_sales_is_accepted():
    sales = (sale(date(2024, 3, 4), n) for n in (1, 2))
    assert summary.weekly_totals(sales) == {"2024-W10": 300}
