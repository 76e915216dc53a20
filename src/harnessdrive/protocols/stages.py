"""Naming the piece of machinery that failed, so every report can say which one it was."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager

from harnessdrive.errors import HarnessdriveError


class StageFailed(Exception):
    """An unexpected error inside one named stage of a trial (never the agent's doing)."""

    def __init__(self, stage: str, cause: BaseException) -> None:
        super().__init__(f"{stage} failed: {describe(cause)}")
        self.stage = stage
        self.cause = cause


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Run a block as stage ``name``: an error escaping it becomes :class:`StageFailed`."""
    try:
        yield
    except StageFailed:
        raise
    except Exception as exc:
        raise StageFailed(name, exc) from exc


def describe(exc: BaseException) -> str:
    if isinstance(exc, HarnessdriveError):
        return str(exc)  # ours: the message says it all
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()
