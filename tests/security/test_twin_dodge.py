"""A forger who knows how twins are made but not the hidden tests: a value equal to everything,
except in a twin, where comparing it raises instead of failing an assertion.

The twin is found at run time without knowing any test: it is a test whose assertion line
starts like a line of a test defined above it in the same file (the twin is its original, cut
at its first equality assertion, planted after it). Raising there makes the twin end failed,
which a twin must; the original, meeting the same value, passes. Whether the twin then reads as
an error or as a failed assertion makes no difference: the forger raises AssertionError as
readily as anything else, so asking for the perturbed assertion's own failure closes nothing.
Twins catch forgeries that cannot tell them from their originals; code that reads its caller's
source can, and this stays open."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.security.test_verdict_forgery import graded, task_of

pytestmark = [pytest.mark.security, pytest.mark.slow]

TWIN_AWARE = """
import linecache
import sys


def _in_twin():
    frame = sys._getframe(2)
    while frame is not None and not frame.f_code.co_name.startswith("test"):
        frame = frame.f_back
    if frame is None:
        return False
    name = frame.f_code.co_filename
    line = linecache.getline(name, frame.f_lineno).strip()
    head = line.split("==")[0].split(",")[0]
    above = [linecache.getline(name, n).strip() for n in range(1, frame.f_code.co_firstlineno)]
    return any(text != line and text.startswith(head) for text in above)


class Result:
    def __eq__(self, other):
        if _in_twin():
            raise RAISED("not comparable")
        return True

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__


def add(a, b):
    return Result()
"""


@pytest.mark.parametrize("raised", ["TypeError", "AssertionError"])
@pytest.mark.parametrize("runner", ["pytest", "unittest"])
def test_a_value_equal_to_everything_but_in_twins_is_never_a_pass(
    tmp_path: Path, runner: str, raised: str
) -> None:
    module = TWIN_AWARE.replace("RAISED", raised)
    verdict = graded(tmp_path, task_of(runner), {"calc.py": module})
    assert verdict.outcome != "pass", verdict
