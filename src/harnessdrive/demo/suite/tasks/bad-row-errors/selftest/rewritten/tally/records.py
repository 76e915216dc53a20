"""Reading sales files: a CSV header line, then one line per sale."""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from typing import TypeVar

from tally.errors import SalesFormatError
from tally.money import parse_amount

HEADER = ("day", "sku", "quantity", "unit_price")
_T = TypeVar("_T")


@dataclass(frozen=True)
class Sale:
    """One line of a sales file: ``quantity`` units of ``sku`` sold on ``day``.

    ``unit_price`` is in whole cents and is negative for a discount line.
    """

    day: date
    sku: str
    quantity: int
    unit_price: int

    @property
    def revenue(self) -> int:
        """What this line adds to the takings, in cents."""
        return self.quantity * self.unit_price


def _quantity(text: str) -> int:
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise ValueError(text)
    return int(text)


def _field(number: int, what: str, text: str, read: Callable[[str], _T]) -> _T:
    try:
        return read(text)
    except ValueError:
        raise SalesFormatError(number, f"the {what} {text!r} is not valid") from None


def read_sales(lines: Iterable[str]) -> list[Sale]:
    """Read the sales in the lines of a CSV sales file, in file order.

    The first line must be the header ``day,sku,quantity,unit_price``; an empty input has
    no sales. Every other line is one sale: the day as ``YYYY-MM-DD``, a non-empty SKU,
    the quantity as a whole number of at least 1, and the unit price in the form
    ``tally.money.parse_amount`` accepts. Spaces around fields are ignored and blank lines
    are skipped.

    Anything else raises ``SalesFormatError`` naming the first line that is wrong.
    """
    rows = csv.reader(lines)
    first = next(rows, None)
    if first is None:
        return []
    if [name.strip() for name in first] != list(HEADER):
        raise SalesFormatError(rows.line_num, "the header is not " + ",".join(HEADER))
    sales: list[Sale] = []
    for row in rows:
        if not row:
            continue
        number = rows.line_num
        if len(row) != 4:
            raise SalesFormatError(number, f"{len(row)} fields instead of 4")
        day, sku, quantity, price = (cell.strip() for cell in row)
        if sku == "":
            raise SalesFormatError(number, "no SKU")
        sales.append(
            Sale(
                _field(number, "day", day, date.fromisoformat),
                sku,
                _field(number, "quantity", quantity, _quantity),
                _field(number, "unit price", price, parse_amount),
            )
        )
    return sales


def load_sales(path: str | os.PathLike[str]) -> list[Sale]:
    """Read the UTF-8 sales file at ``path``; see ``read_sales``."""
    with open(path, encoding="utf-8", newline="") as handle:
        return read_sales(handle)
