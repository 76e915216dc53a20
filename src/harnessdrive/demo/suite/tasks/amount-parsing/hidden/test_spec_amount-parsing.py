"""Spec tests for parse_amount: every rule in its docstring, not just the reported value."""

import pytest

from tally.money import format_cents, parse_amount


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("3", 300),
        ("3.5", 350),
        ("3.50", 350),
        ("0.5", 50),
        ("0.05", 5),
        ("12.5", 1250),
        ("1234.9", 123490),
        (" 8.1 ", 810),
        ("007.70", 770),
    ],
)
def test_one_or_two_decimal_places_are_cents(text, cents):
    assert parse_amount(text) == cents


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("-3", -300),
        ("-3.05", -305),
        ("-3.5", -350),
        ("-0.05", -5),
        ("-0.5", -50),
        ("-0.50", -50),
    ],
)
def test_the_minus_sign_applies_to_the_whole_amount(text, cents):
    assert parse_amount(text) == cents


@pytest.mark.parametrize(
    "text",
    ["", "   ", "abc", "3.", ".5", "-.5", "3.505", "1,50", "1.2.3", "3.x", "- 3", "--3", "3-"],
)
def test_anything_else_is_rejected(text):
    with pytest.raises(ValueError):
        parse_amount(text)


def test_format_cents_reads_back_to_the_same_amount():
    for cents in [*range(-250, 251), 99999, -100001]:
        assert parse_amount(format_cents(cents)) == cents
