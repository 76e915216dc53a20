"""Spec tests for ranking.top_products: the tie-break rules its docstring states."""

from datetime import date

from tally.ranking import top_products
from tally.records import Sale

DAY = date(2024, 3, 4)


def test_units_are_summed_over_lines():
    sales = [Sale(DAY, "TEA-12", 2, 425), Sale(DAY, "MUG-01", 3, 850), Sale(DAY, "TEA-12", 2, 425)]
    assert top_products(sales) == [("TEA-12", 4), ("MUG-01", 3)]


def test_equal_units_are_ranked_by_revenue():
    sales = [Sale(DAY, "CHEAP", 2, 100), Sale(DAY, "DEAR", 2, 900)]
    assert top_products(sales) == [("DEAR", 2), ("CHEAP", 2)]


def test_revenue_is_summed_over_lines_with_different_prices():
    sales = [
        Sale(DAY, "A-1", 1, 500),
        Sale(DAY, "B-1", 1, 400),
        Sale(DAY, "A-1", 1, 100),
        Sale(DAY, "B-1", 1, 400),
    ]
    assert top_products(sales) == [("B-1", 2), ("A-1", 2)]


def test_equal_units_and_revenue_are_ranked_by_sku():
    sales = [Sale(DAY, "TEA-12", 1, 300), Sale(DAY, "JAR-03", 1, 300), Sale(DAY, "MUG-01", 1, 300)]
    assert top_products(sales) == [("JAR-03", 1), ("MUG-01", 1), ("TEA-12", 1)]


def test_sku_order_is_plain_string_order():
    sales = [Sale(DAY, "apple", 1, 300), Sale(DAY, "Zest", 1, 300)]
    assert top_products(sales) == [("Zest", 1), ("apple", 1)]


def test_the_tie_break_decides_who_makes_the_cut():
    sales = [Sale(DAY, sku, 1, 200) for sku in ("D", "C", "B", "A")]
    assert top_products(sales, n=2) == [("A", 1), ("B", 1)]


def test_n_larger_than_the_number_of_products_returns_them_all():
    sales = [Sale(DAY, "MUG-01", 1, 850), Sale(DAY, "TEA-12", 2, 425)]
    assert top_products(sales, n=10) == [("TEA-12", 2), ("MUG-01", 1)]


def test_n_zero_returns_nothing():
    assert top_products([Sale(DAY, "MUG-01", 1, 850)], n=0) == []


def test_any_iterable_of_sales_is_accepted():
    sales = (Sale(DAY, sku, 1, 100) for sku in ("B", "A", "B"))
    assert top_products(sales) == [("B", 2), ("A", 1)]
