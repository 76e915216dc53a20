"""HEAD's check runs beside the candidates' checks, not before them.

HEAD's whole suite holds a test that waits for a sign that only a candidate's run gives (its
own test, run on the buggy parent, leaves a file outside the copy). Checked alone first, HEAD
would wait in vain and fail; checked beside the candidates, the other worker runs the
candidate's fast check meanwhile and HEAD passes. A HEAD that fails is reported as if it had
run first: its error, and no candidate's progress.
"""

from __future__ import annotations

import sys
from concurrent.futures import Future
from pathlib import Path

import pytest

from harnessdrive.errors import UserError
from harnessdrive.executors.registry import create_executor
from harnessdrive.mining.beside_head import heads_error, start_head_check, validate_beside_head
from harnessdrive.mining.checks import CandidateResult, Checker, Stopped
from harnessdrive.mining.history import scan_history
from harnessdrive.mining.mine import MineOptions, mine
from harnessdrive.mining.runs import RunQueue
from harnessdrive.mining.summary import CheckRecord
from harnessdrive.mining.taskfiles import TaskSettings
from harnessdrive.mining.validation import HeadCheck, Progress, ValidationOutcome
from harnessdrive.sandbox.process import StopToken
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.trial.job import WorkerSettings

TEST_COMMAND = "{python} -m unittest discover -s tests -q"
WAIT_SECONDS = 60
"""How long HEAD's test waits for the sign before it fails (a bound, never a measured time)."""


def test_heads_check_overlaps_the_candidates_checks(tmp_path: Path) -> None:
    sign = tmp_path / "a candidate ran"
    repo = RepoBuilder(tmp_path / "calc")
    repo.commit(
        "Start",
        {
            "calc.py": "def add(a, b):\n    return a - b\n",
            "tests/test_start.py": "import unittest\n\n\nclass Start(unittest.TestCase):\n"
            "    def test_it(self):\n        pass\n",
        },
    )
    add_test = (
        "import pathlib\nimport unittest\n\nimport calc\n\n"
        "if calc.add(2, 3) != 5:  # only on the parent, where add is still wrong\n"
        f"    pathlib.Path({str(sign)!r}).touch()\n\n\n"
        "class Add(unittest.TestCase):\n"
        "    def test_it(self):\n        self.assertEqual(calc.add(2, 3), 5)\n"
    )
    sha = repo.commit(
        "Fix add",
        {"calc.py": "def add(a, b):\n    return a + b\n", "tests/test_add.py": add_test},
    )
    repo.commit(
        "Test that waits for a candidate's run",
        {
            "tests/test_wait.py": "import pathlib\nimport time\nimport unittest\n\n\n"
            "class Wait(unittest.TestCase):\n"
            "    def test_it(self):\n"
            f"        deadline = time.monotonic() + {WAIT_SECONDS}\n"
            f"        while not pathlib.Path({str(sign)!r}).exists():\n"
            "            self.assertLess(time.monotonic(), deadline)\n"
            "            time.sleep(0.05)\n",
        },
    )
    repo.checkout()
    repo.close()
    options = MineOptions(
        repo=tmp_path / "calc",
        since="2000-01-01",
        test_command=TEST_COMMAND,
        validate=True,
        jobs=2,
        output=tmp_path / "suite",
    )
    result = mine(options, sandbox="none", python=sys.executable)
    assert sign.exists()
    assert result.summary.head_check is not None and result.summary.head_check.exit_code == 0
    assert [task.commit for task in result.summary.tasks] == [sha]


def test_a_failing_head_stops_the_candidates_and_none_is_reported(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "calc")
    repo.commit("Start", {"calc.py": "X = 1\n", "tests/test_x.py": "raise SystemExit(3)\n"})
    repo.commit("Change", {"calc.py": "X = 2\n", "tests/test_x.py": "raise SystemExit(4)\n"})
    repo.checkout()
    repo.close()
    scan = scan_history(tmp_path / "calc", "2000-01-01")
    runs = RunQueue(
        create_executor("local", WorkerSettings(jobs=2, sandbox="none", python=sys.executable))
    )
    checker = Checker(
        repo=tmp_path / "calc",
        settings=TaskSettings(test_command="exit 3", setup_command=None, test_timeout=60),
        store=None,
        runs=runs,
        staging=tmp_path / "staging",
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        stop=StopToken(),
    )
    candidate = scan.candidates[0]
    reported: list[CandidateResult] = []

    def validation(progress: Progress | None) -> ValidationOutcome:
        # A candidate is done before HEAD's verdict, then validation goes on until halted.
        assert progress is not None
        progress(1, 1, CandidateResult(candidate, "flaky", CheckRecord(), None))
        assert checker.stop.wait(60), "HEAD's failure never stopped validation"
        raise Stopped("halted")

    try:
        with pytest.raises(UserError, match="fails in a fresh copy of HEAD"):
            validate_beside_head(checker, scan.head, validation, lambda *a: reported.append(a[2]))
    finally:
        runs.executor.close()
    assert reported == []


def test_a_stop_that_also_ended_heads_run_stays_a_stop() -> None:
    # Ctrl-C or SIGTERM can end HEAD's run before validation sees the interrupt: that is no
    # error of HEAD's (mining then exits 130 as stopped, not 1 with a traceback).
    stopped: Future[HeadCheck] = Future()
    stopped.set_exception(Stopped("stopped while HEAD ran its tests"))
    assert heads_error(stopped) is None
    failed: Future[HeadCheck] = Future()
    failed.set_exception(UserError("the test command fails in a fresh copy of HEAD"))
    assert isinstance(heads_error(failed), UserError)
    running: Future[HeadCheck] = Future()
    assert heads_error(running) is None


def test_a_head_check_started_early_is_the_one_validation_waits_for(tmp_path: Path) -> None:
    """mine starts HEAD's run before it reviews the prompts; HEAD is then not run again."""
    repo = RepoBuilder(tmp_path / "calc")
    test = (
        "import unittest\n\n\nclass X(unittest.TestCase):\n    def test_it(self):\n        pass\n"
    )
    repo.commit("Start", {"calc.py": "X = 1\n", "tests/test_x.py": test})
    repo.commit("Change", {"calc.py": "X = 2\n", "tests/test_x.py": test + "\n"})
    repo.checkout()
    repo.close()
    runs_of_head = tmp_path / "runs"
    scan = scan_history(tmp_path / "calc", "2000-01-01")
    executor = create_executor(
        "local", WorkerSettings(jobs=2, sandbox="none", python=sys.executable)
    )
    checker = Checker(
        repo=tmp_path / "calc",
        settings=TaskSettings(
            test_command=f"echo run >> {runs_of_head} && {TEST_COMMAND}",
            setup_command=None,
            test_timeout=60,
        ),
        store=None,
        runs=RunQueue(executor),
        staging=tmp_path / "staging",
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        stop=StopToken(),
    )
    try:
        early = start_head_check(checker, scan.head)
        passed, _ = validate_beside_head(
            checker, scan.head, lambda _: ValidationOutcome((), 0.0), None, started=early
        )
    finally:
        executor.close()
    assert passed is early.result()
    assert runs_of_head.read_text() == "run\n"
