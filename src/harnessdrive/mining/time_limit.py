"""The time limit of one test run, derived from HEAD's own time unless the user gives one.

A suite that takes 5 s at HEAD gains nothing from a 600 s limit: a candidate whose fix hangs
costs ten minutes before it is rejected. Once HEAD has passed, runs that start afterwards, and
every task written, get ten times HEAD's time (at least a minute, at most the default).
"""

from __future__ import annotations

import math
import threading

DEFAULT_TEST_TIMEOUT = 600.0
HEAD_FACTOR = 10
MIN_DERIVED = 60.0


class TimeLimit:
    def __init__(self, given: float | None, default: float = DEFAULT_TEST_TIMEOUT) -> None:
        self.given = given
        self._seconds = given if given is not None else default
        self._default = default
        self._guard = threading.Lock()

    @property
    def seconds(self) -> float:
        with self._guard:
            return self._seconds

    @property
    def derived(self) -> bool:
        return self.given is None and self._seconds != self._default

    def derive(self, head_seconds: float) -> None:
        """Set from HEAD's time, unless the user gave a limit."""
        if self.given is not None:
            return
        derived = max(MIN_DERIVED, float(math.ceil(HEAD_FACTOR * head_seconds)))
        with self._guard:
            self._seconds = min(self._default, derived)
