"""Slots for validation's environment builds: at most ``size`` at once, the oldest commit's first.

Test runs are trial jobs on the executor (mining/runs.py), which orders them the same way;
the shared environments are built on this host, outside any trial, so they take a slot here.
A free slot goes to the waiting build of the oldest commit first, so commits finish in the
order a one-at-a-time run would check them.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager

Rank = tuple[int, int]
"""(the commit's place, newest first; the step's place within the commit)."""


class NotNeeded(Exception):
    """The commit lies past the last one a one-at-a-time run would check: its result is unused."""


class RunSlots:
    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("at least one slot")
        self.size = size
        self._free = size
        self._waiting: list[tuple[Rank, int]] = []
        self._tickets = itertools.count()
        self._changed = threading.Condition()
        self._last: int | None = None

    @property
    def waiting(self) -> int:
        with self._changed:
            return len(self._waiting)

    def close_after(self, place: int) -> None:
        """From now on a step of a commit after ``place`` raises :class:`NotNeeded` instead of
        waiting for a slot (``--max`` tasks are kept among the commits up to ``place``)."""
        with self._changed:
            self._last = place if self._last is None else min(self._last, place)
            self._changed.notify_all()

    @contextmanager
    def held(self, rank: Rank) -> Iterator[None]:
        """Wait for a slot (lowest rank first) and hold it for the ``with`` block."""
        entry = (rank, next(self._tickets))
        with self._changed:
            heapq.heappush(self._waiting, entry)
            # The cut-off is checked on every wake-up, also the one that finds a slot free: a
            # commit past it never takes one.
            while True:
                if self._last is not None and rank[0] > self._last:
                    self._waiting.remove(entry)
                    heapq.heapify(self._waiting)
                    self._changed.notify_all()
                    raise NotNeeded
                if self._free > 0 and self._waiting[0] == entry:
                    break
                self._changed.wait()
            heapq.heappop(self._waiting)
            self._free -= 1
            self._changed.notify_all()  # the next waiter may take a slot that is still free
        try:
            yield
        finally:
            with self._changed:
                self._free += 1
                self._changed.notify_all()
