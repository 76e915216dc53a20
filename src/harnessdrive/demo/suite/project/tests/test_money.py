import pytest

from tally.money import format_cents, parse_amount


def test_parse_amount_reads_two_decimal_places():
    assert parse_amount("12.50") == 1250
    assert parse_amount("0.99") == 99


def test_parse_amount_reads_whole_amounts_and_ignores_spaces():
    assert parse_amount("7") == 700
    assert parse_amount("  7  ") == 700


def test_parse_amount_reads_one_decimal_place():
    assert parse_amount("12.5") == 1250


def test_parse_amount_rejects_text():
    with pytest.raises(ValueError):
        parse_amount("twelve")


def test_format_cents_always_shows_two_places():
    assert format_cents(1250) == "12.50"
    assert format_cents(7) == "0.07"
    assert format_cents(0) == "0.00"


def test_format_cents_puts_the_sign_in_front():
    assert format_cents(-5) == "-0.05"
    assert format_cents(-1999) == "-19.99"
