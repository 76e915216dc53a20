"""Spec tests for read_sales: every bad line raises SalesFormatError naming that line."""

import pytest

from tally.errors import SalesFormatError
from tally.records import load_sales, read_sales

HEADER = "day,sku,quantity,unit_price"
GOOD = "2024-03-04,MUG-01,2,8.50"


def error_for(*lines):
    with pytest.raises(SalesFormatError) as caught:
        read_sales([HEADER, *lines])
    return caught.value


@pytest.mark.parametrize(
    "bad_line",
    [
        "2024-03-04,MUG-01,two,8.50",
        "2024-03-04,MUG-01,2.5,8.50",
        "2024-03-04,MUG-01,0,8.50",
        "2024-03-04,MUG-01,-2,8.50",
        "2024-03-04,MUG-01,,8.50",
        "2024-03-04,MUG-01,2,abc",
        "2024-03-04,MUG-01,2,",
        "2024-03-04,MUG-01,2,8;50",
        "yesterday,MUG-01,2,8.50",
        "2024-02-30,MUG-01,2,8.50",
        "2024-03-04,,2,8.50",
        "2024-03-04,MUG-01,2",
        "2024-03-04,MUG-01,2,8.50,extra",
    ],
)
def test_a_bad_line_is_reported_with_its_line_number(bad_line):
    error = error_for(GOOD, bad_line, GOOD)
    assert error.line_number == 3
    assert str(error).startswith("line 3: ")


def test_the_error_is_still_a_value_error():
    assert isinstance(error_for("2024-03-04,MUG-01,two,8.50"), ValueError)


def test_the_message_says_more_than_the_line_number():
    assert len(str(error_for("2024-03-04,MUG-01,-2,8.50"))) > len("line 2: ")


def test_blank_lines_are_counted():
    error = error_for("", GOOD, "", "2024-03-04,MUG-01,-2,8.50")
    assert error.line_number == 5
    assert str(error).startswith("line 5: ")


def test_the_first_bad_line_is_the_one_reported():
    error = error_for("2024-03-04,MUG-01,0,8.50", "2024-03-04,MUG-01,two,8.50")
    assert error.line_number == 2


def test_a_wrong_header_is_line_one():
    with pytest.raises(SalesFormatError) as caught:
        read_sales(["date,item,qty,price", GOOD])
    assert caught.value.line_number == 1
    assert str(caught.value).startswith("line 1: ")


def test_load_sales_reports_the_line_in_the_file(tmp_path):
    path = tmp_path / "sales.csv"
    path.write_text(f"{HEADER}\n{GOOD}\n\n{GOOD}\n2024-03-04,MUG-01,1,eight\n", encoding="utf-8")
    with pytest.raises(SalesFormatError, match=r"^line 5: "):
        load_sales(path)


def test_good_lines_still_read_as_before():
    sales = read_sales(
        [HEADER, " 2024-03-04 , MUG-01 , 3 , 0.99 ", "", "2024-03-05,DISCOUNT,1,-1.00"]
    )
    assert [(s.sku, s.quantity, s.unit_price) for s in sales] == [
        ("MUG-01", 3, 99),
        ("DISCOUNT", 1, -100),
    ]
