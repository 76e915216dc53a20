from datetime import date

from tally.ranking import top_products
from tally.records import Sale

DAY = date(2024, 3, 4)


def test_top_products_counts_units_not_lines():
    sales = [
        Sale(DAY, "MUG-01", 5, 850),
        Sale(DAY, "TEA-12", 1, 425),
        Sale(DAY, "TEA-12", 1, 425),
        Sale(DAY, "JAR-03", 3, 300),
    ]
    assert top_products(sales) == [("MUG-01", 5), ("JAR-03", 3), ("TEA-12", 2)]


def test_top_products_returns_at_most_n():
    sales = [Sale(DAY, sku, units, 100) for sku, units in [("A", 1), ("B", 4), ("C", 2), ("D", 3)]]
    assert top_products(sales, n=2) == [("B", 4), ("D", 3)]


def test_top_products_of_no_sales_is_empty():
    assert top_products([]) == []
