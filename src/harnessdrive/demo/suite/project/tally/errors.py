"""Errors raised by tally."""

from __future__ import annotations


class SalesFormatError(ValueError):
    """A sales file that cannot be read.

    It is a ``ValueError``, so callers that already catch ``ValueError`` keep working.
    """
