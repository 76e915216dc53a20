"""Reading sales files: a CSV header line, then one line per sale."""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from tally.errors import SalesFormatError
from tally.money import parse_amount

HEADER = ("day", "sku", "quantity", "unit_price")


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


def read_sales(lines: Iterable[str]) -> list[Sale]:
    """Read the sales in the lines of a CSV sales file, in file order.

    The first line must be the header ``day,sku,quantity,unit_price``; an empty input has
    no sales. Every other line is one sale: the day as ``YYYY-MM-DD``, a non-empty SKU,
    the quantity as a whole number of at least 1, and the unit price in the form
    ``tally.money.parse_amount`` accepts. Spaces around fields are ignored and blank lines
    are skipped.

    Anything else raises ``SalesFormatError``.
    """
    reader = csv.reader(lines)
    header = next(reader, None)
    if header is None:
        return []
    if tuple(name.strip() for name in header) != HEADER:
        raise SalesFormatError(f"expected the header {','.join(HEADER)}")
    sales = []
    for fields in reader:
        if not fields:
            continue
        if len(fields) != len(HEADER):
            raise SalesFormatError(f"expected {len(HEADER)} fields, got {len(fields)}")
        day, sku, quantity, unit_price = (field.strip() for field in fields)
        if not sku:
            raise SalesFormatError("the SKU is empty")
        sales.append(Sale(date.fromisoformat(day), sku, int(quantity), parse_amount(unit_price)))
    return sales


def load_sales(path: str | os.PathLike[str]) -> list[Sale]:
    """Read the UTF-8 sales file at ``path``; see ``read_sales``."""
    with open(path, encoding="utf-8", newline="") as handle:
        return read_sales(handle)
