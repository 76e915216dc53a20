"""Waiting in tests for an event, never for a fixed time.

The deadline only keeps a broken run from hanging the suite: it is generous on purpose, and
reaching it fails the test with what was awaited. How fast something happens is measured by
the benchmarks, not here.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import psutil

T = TypeVar("T")

# Long enough for a loaded 2-core machine; reaching it means the event will never come.
DEADLINE = 120.0


def wait_until(
    condition: Callable[[], T],
    what: str,
    *,
    timeout: float = DEADLINE,
    process: subprocess.Popen[str] | subprocess.Popen[bytes] | None = None,
) -> T:
    """Poll ``condition`` until it returns something true, and return that.

    ``what`` names the event for the failure message. With ``process``, its exit before the
    event is a failure too (the event can no longer come).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if process is not None and process.poll() is not None:
            raise AssertionError(f"{what}: never happened; the process exited {process.returncode}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not seen after {timeout:g} s")
        time.sleep(0.02)


def descendants_running(pid: int, argv: list[str]) -> list[psutil.Process]:
    """The live descendants of ``pid`` whose command line is exactly ``argv``."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    found = []
    for child in children:
        try:
            if child.cmdline() == argv and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


def trials_under_way(results: Path) -> list[str]:
    """The trials a results folder marks in flight that have no result yet."""
    trials = []
    for path in results.glob("inflight/*.json"):
        with contextlib.suppress(FileNotFoundError):  # it ended just now
            trials.append(json.loads(path.read_text())["trial_id"])
    return [t for t in trials if not (results / "trials" / t / "result.json").exists()]
