"""Money amounts, held as whole cents so that sums are exact."""

from __future__ import annotations


def parse_amount(text: str) -> int:
    """Parse a decimal amount such as ``"12.50"`` into whole cents (``1250``).

    Surrounding whitespace is ignored. The amount is an optional leading ``-`` (discounts
    are negative), one or more digits, and optionally a ``.`` followed by one or two
    digits: ``"3"``, ``"3.5"`` and ``"3.50"`` all mean 350 cents, and ``"-0.05"`` means
    -5 cents. Anything else raises ``ValueError``, for example ``""``, ``"3."``,
    ``".5"``, ``"3.505"`` or ``"1,50"``.
    """
    whole, _, fraction = text.strip().partition(".")
    return int(whole) * 100 + int(fraction or 0)


def format_cents(cents: int) -> str:
    """Format whole cents as a decimal amount with exactly two places.

    ``1250`` becomes ``"12.50"``, ``-5`` becomes ``"-0.05"`` and ``123456`` becomes
    ``"1234.56"`` (no thousands separators). ``parse_amount`` reads the result back
    to the same number of cents.
    """
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
