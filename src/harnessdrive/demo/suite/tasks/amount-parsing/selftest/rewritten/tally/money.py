"""Money amounts, held as whole cents so that sums are exact."""

from __future__ import annotations

_DIGITS = frozenset("0123456789")


def _digits_only(part: str) -> bool:
    return bool(part) and all(char in _DIGITS for char in part)


def parse_amount(text: str) -> int:
    """Parse a decimal amount such as ``"12.50"`` into whole cents (``1250``).

    Surrounding whitespace is ignored. The amount is an optional leading ``-`` (discounts
    are negative), one or more digits, and optionally a ``.`` followed by one or two
    digits: ``"3"``, ``"3.5"`` and ``"3.50"`` all mean 350 cents, and ``"-0.05"`` means
    -5 cents. Anything else raises ``ValueError``, for example ``""``, ``"3."``,
    ``".5"``, ``"3.505"`` or ``"1,50"``.
    """
    body = text.strip()
    negative = body.startswith("-")
    if negative:
        body = body[1:]
    units, point, cents = body.partition(".")
    if not _digits_only(units):
        raise ValueError(f"not an amount: {text!r}")
    if point and not (_digits_only(cents) and len(cents) <= 2):
        raise ValueError(f"not an amount: {text!r}")
    total = int(units) * 100 + (int(cents) * (10 if len(cents) == 1 else 1) if cents else 0)
    return -total if negative else total


def format_cents(cents: int) -> str:
    """Format whole cents as a decimal amount with exactly two places.

    ``1250`` becomes ``"12.50"``, ``-5`` becomes ``"-0.05"`` and ``123456`` becomes
    ``"1234.56"`` (no thousands separators). ``parse_amount`` reads the result back
    to the same number of cents.
    """
    digits = str(abs(cents)).rjust(3, "0")
    return ("-" if cents < 0 else "") + digits[:-2] + "." + digits[-2:]
