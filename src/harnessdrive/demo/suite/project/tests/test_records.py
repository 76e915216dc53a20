from datetime import date

import pytest

from tally.errors import SalesFormatError
from tally.records import Sale, load_sales, read_sales

GOOD_FILE = """\
day,sku,quantity,unit_price
2024-03-04,MUG-01,2,8.50
2024-03-04, TEA-12 ,1,4.25

2024-03-05,DISCOUNT,1,-1.00
"""


def test_read_sales_reads_every_line_in_order():
    assert read_sales(GOOD_FILE.splitlines()) == [
        Sale(date(2024, 3, 4), "MUG-01", 2, 850),
        Sale(date(2024, 3, 4), "TEA-12", 1, 425),
        Sale(date(2024, 3, 5), "DISCOUNT", 1, -100),
    ]


def test_revenue_is_quantity_times_unit_price():
    assert Sale(date(2024, 3, 4), "MUG-01", 3, 850).revenue == 2550


def test_load_sales_reads_a_file(tmp_path):
    path = tmp_path / "sales.csv"
    path.write_text(GOOD_FILE, encoding="utf-8")
    assert len(load_sales(path)) == 3


def test_empty_input_has_no_sales():
    assert read_sales([]) == []


def test_a_wrong_header_is_rejected():
    with pytest.raises(SalesFormatError):
        read_sales(["date,item,qty,price", "2024-03-04,MUG-01,2,8.50"])


def test_a_quantity_that_is_not_a_number_names_its_line():
    lines = [
        "day,sku,quantity,unit_price",
        "2024-03-04,MUG-01,2,8.50",
        "2024-03-04,MUG-01,two,8.50",
    ]
    with pytest.raises(SalesFormatError, match=r"^line 3: "):
        read_sales(lines)
