"""Errors raised by tally."""

from __future__ import annotations


class SalesFormatError(ValueError):
    """A sales file line that tally cannot read, with where it is and what is wrong.

    ``line_number`` counts from 1 at the header, blank lines included; the message reads
    ``"line <n>: <what is wrong>"``. A ``ValueError``, so existing callers keep working.
    """

    line_number: int

    def __init__(self, line_number: int, problem: str) -> None:
        self.line_number = line_number
        self.problem = problem
        super().__init__(f"line {line_number}: {problem}")
