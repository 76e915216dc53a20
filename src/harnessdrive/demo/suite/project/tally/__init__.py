"""tally: read a shop's sales file and summarise it."""

from __future__ import annotations

from tally.errors import SalesFormatError
from tally.records import Sale, load_sales, read_sales

__all__ = ["Sale", "SalesFormatError", "load_sales", "read_sales"]
