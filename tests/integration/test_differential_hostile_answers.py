"""Differential candidates whose answers attack the grader's readers: nesting past the stack,
numbers that overflow, forged and garbled lines in the worker's results, huge answers. Each is
the candidate's fail, graded in bubblewrap as a trial is; what is kept of them stays small."""

from __future__ import annotations

import pytest

from harnessdrive.grading.differential.casesets import CaseRow
from harnessdrive.sandbox.runner import Sandbox
from harnessdrive.tasks.loading import Task
from tests.integration.test_differential_containment import cases, grade, sandbox, task

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("differential-containment")]
__all__ = ["cases", "sandbox", "task"]  # the module's fixtures, shared

NESTED = """
def skipped(case):
    value = []
    for _ in range(100_000):
        value = [value]
    return value
"""
FORGED = """
import sys

def skipped(case):
    with open(sys.argv[5], "a") as results:
        results.write('R {"i": 1e999, "answer": []}\\n')
        results.write('R {"i": ' + "9" * 5000 + '}\\n')
        results.write("R " + "[" * 100_000 + "\\n")
        results.write("B " + "9" * 5000 + "\\n")
    return ["not", "the", "answer"]
"""
HUGE = """
def skipped(case):
    return ["x" * 1000] * 3000
"""


@pytest.mark.parametrize("candidate", [NESTED, FORGED, HUGE], ids=["nested", "forged", "huge"])
def test_a_hostile_answer_is_the_candidates_fail(
    tmp_path, task: Task, cases: tuple[CaseRow, ...], sandbox: Sandbox, candidate: str
) -> None:
    verdict = grade(
        tmp_path,
        task,
        cases[:4],
        sandbox,
        {"skiplist/rules.py": candidate},
        minimise=True,
        max_counterexamples=2,
    )
    assert verdict.outcome == "fail"
    assert verdict.score == 0.0
    stored = verdict.model_dump_json()
    assert len(stored) < 100_000
