"""Validation's step order: the fast check first, then both whole-suite rounds.

The same candidates are checked on an executor of one worker (one step after another) and of
two, where the whole-suite runs wait for workers at once; the verdicts and the recorded runs
must be the same, and the fast check must never let a candidate through whose whole suite fails
with the fix.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harnessdrive.executors.registry import create_executor
from harnessdrive.mining.checks import CandidateResult, Checker
from harnessdrive.mining.history import scan_history
from harnessdrive.mining.runs import RunQueue
from harnessdrive.mining.taskfiles import TaskSettings
from harnessdrive.sandbox.process import StopToken
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.trial.job import WorkerSettings

TEST_COMMAND = "{python} -m unittest discover -s tests -q"
CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def unit_test(name: str, body: str) -> str:
    return (
        f"import unittest\n\nimport calc\n\n\nclass {name}(unittest.TestCase):\n"
        f"    def test_it(self):\n        {body}\n"
    )


def build(path: Path) -> dict[str, str]:
    repo = RepoBuilder(path)
    calc = CALC
    repo.commit(
        "Start",
        {
            "calc.py": calc,
            "tests/test_mul.py": unit_test("Mul", "self.assertEqual(calc.mul(2, 3), 6)"),
        },
    )
    sha = {}
    calc = calc.replace("return a - b", "return a + b")
    sha["good"] = repo.commit(
        "Fix add",
        {
            "calc.py": calc,
            "tests/test_add.py": unit_test("Add", "self.assertEqual(calc.add(2, 3), 5)"),
        },
    )
    # Its own test fails before and passes after, but the fix breaks mul: the whole suite fails.
    broken = calc.replace("return a * b", "return a ** b") + "\n\ndef neg(x):\n    return -x\n"
    sha["breaks-the-suite"] = repo.commit(
        "Add neg",
        {
            "calc.py": broken,
            "tests/test_neg.py": unit_test("Neg", "self.assertEqual(calc.neg(2), -2)"),
        },
    )
    calc += "\n\ndef neg(x):\n    return -x\n"
    repo.commit("Mend mul", {"calc.py": calc})
    calc += "\n# the identity\n"
    sha["passes-before"] = repo.commit(
        "Test zero",
        {
            "calc.py": calc,
            "tests/test_zero.py": unit_test("Zero", "self.assertEqual(calc.add(0, 0), 0)"),
        },
    )
    repo.checkout()
    repo.close()
    return sha


def check_all(repo: Path, work: Path, workers: int) -> dict[str, CandidateResult]:
    scan = scan_history(repo, "2000-01-01")
    settings = WorkerSettings(jobs=workers, sandbox="none", python=sys.executable)
    runs = RunQueue(create_executor("local", settings))
    checker = Checker(
        repo=repo,
        settings=TaskSettings(test_command=TEST_COMMAND, setup_command=None, test_timeout=60),
        store=None,
        runs=runs,
        staging=work / "staging",
        scratch=work / "scratch",
        logs=work / "logs",
        stop=StopToken(),
        ranks={c.id: i for i, c in enumerate(scan.candidates)},
    )
    try:
        return {c.commit: checker.check(c) for c in scan.candidates}
    finally:
        runs.executor.close()


Checked = tuple[dict[str, str], dict[str, dict[str, CandidateResult]]]
"""The candidates by name, and their results by the way they were checked."""


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Checked:
    root = tmp_path_factory.mktemp("order")
    sha = build(root / "calc")
    results = {
        "one after another": check_all(root / "calc", root / "sequential", 1),
        "two workers": check_all(root / "calc", root / "two", 2),
    }
    return sha, results


@pytest.mark.parametrize("way", ["one after another", "two workers"])
def test_each_candidate_gets_the_verdict_of_the_whole_suite(checked: Checked, way: str) -> None:
    sha, results = checked
    verdicts = {name: results[way][commit].reason for name, commit in sha.items()}
    assert verdicts == {
        "good": None,
        "breaks-the-suite": "tests fail with the fix",
        "passes-before": "tests pass before the fix",
    }


def test_the_fast_check_let_the_suite_breaker_through_to_the_whole_suite(checked: Checked) -> None:
    sha, results = checked
    record = results["two workers"][sha["breaks-the-suite"]].check
    assert record.focused is not None and record.focused.exit_code != 0
    assert record.before is None  # its own tests failing alone is the suite failing
    assert record.after is not None and record.after.exit_code != 0
    assert record.focused_again is None and record.focused_after is None


def test_two_workers_record_the_same_runs_as_one_after_another(checked: Checked) -> None:
    _, results = checked

    def runs(result: CandidateResult) -> dict[str, int | None]:
        return {label: run.exit_code for label, run in result.check if run is not None}

    sequential, shared = results["one after another"], results["two workers"]
    assert {c: runs(r) for c, r in shared.items()} == {c: runs(r) for c, r in sequential.items()}
    good = next(r for r in shared.values() if r.kept)
    assert set(runs(good)) == {"focused", "after", "focused_again", "focused_after"}
