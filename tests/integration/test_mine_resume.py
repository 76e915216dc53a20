"""Acceptance: a mining run stopped half-way continues where it stopped when run again.

The first run is stopped (as Ctrl-C stops it) once its first commit is checked. The second run,
the same command, takes that commit's verdict from the journal without a test run, keeps its
logs, and checks only the rest; the suite is the one a run without a stop writes.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.mining.checks import CandidateResult
from harnessdrive.mining.journal import JOURNAL_FILE
from harnessdrive.mining.mine import MineOptions, mine
from harnessdrive.testing.repo_builder import RepoBuilder

pytestmark = pytest.mark.slow  # mines a history more than once

TEST_COMMAND = "python3 -m unittest discover -s tests -q"


def unit_test(name: str, check: str) -> str:
    return (
        f"import unittest\n\nimport calc\n\n\nclass {name}(unittest.TestCase):\n"
        f"    def test_it(self):\n        {check}\n"
    )


def build(path: Path) -> list[str]:
    """Three good commits, oldest first; returns their shas newest first."""
    repo = RepoBuilder(path)
    repo.commit("Start", {"calc.py": "A = 0\nB = 0\nC = 0\n", "tests/test_base.py": unit_test(
        "Base", "self.assertTrue(True)")})  # fmt: skip
    shas = []
    text = "A = 0\nB = 0\nC = 0\n"
    for name in "ABC":
        text = text.replace(f"{name} = 0", f"{name} = 1")
        shas.append(
            repo.commit(
                f"Set {name}",
                {
                    "calc.py": text,
                    f"tests/test_{name.lower()}.py": unit_test(
                        name, f"self.assertEqual(calc.{name}, 1)"
                    ),
                },
            )
        )
    repo.checkout()
    repo.close()
    return shas[::-1]


class StopAfterFirst:
    def __init__(self) -> None:
        self.seen: list[CandidateResult] = []

    def __call__(self, number: int, total: int, result: CandidateResult) -> None:
        self.seen.append(result)
        raise KeyboardInterrupt  # what Ctrl-C raises on the main thread


def test_a_stopped_run_continues_without_checking_finished_commits(tmp_path: Path) -> None:
    shas = build(tmp_path / "calc")
    options = MineOptions(
        repo=tmp_path / "calc",
        since="2000-01-01",
        test_command=TEST_COMMAND,
        validate=True,
        test_timeout=30,
        output=tmp_path / "suite",
    )
    stopper = StopAfterFirst()
    with pytest.raises(KeyboardInterrupt):
        mine(options, sandbox="none", python=sys.executable, progress=stopper)
    first = stopper.seen[0].candidate
    assert first.commit == shas[0] and stopper.seen[0].kept
    journal = (tmp_path / "suite" / JOURNAL_FILE).read_text().splitlines()
    assert json.loads(journal[1])["commit"] == shas[0]
    first_logs = tmp_path / "suite" / "logs" / first.id
    stamps = {p: p.stat().st_mtime_ns for p in first_logs.rglob("*") if p.is_file()}
    assert stamps

    again: list[CandidateResult] = []
    result = mine(
        options,
        sandbox="none",
        python=sys.executable,
        progress=lambda number, total, found: again.append(found),
    )
    assert [(r.candidate.commit, r.resumed) for r in again] == [
        (shas[0], True),
        (shas[1], False),
        (shas[2], False),
    ]
    assert [t.commit for t in result.summary.tasks] == shas
    # The earlier run's logs of the finished commit are kept as they were.
    assert {p: p.stat().st_mtime_ns for p in first_logs.rglob("*") if p.is_file()} == stamps
    assert (result.suite or tmp_path / "none", (tmp_path / "suite" / "tasks").is_dir()) == (
        tmp_path / "suite",
        True,
    )
    assert sorted(p.name for p in (tmp_path / "suite" / "tasks").iterdir()) == sorted(
        s[:12] for s in shas
    )

    fresh: list[CandidateResult] = []
    mine(
        MineOptions(**{**options.__dict__, "fresh": True}),
        sandbox="none",
        python=sys.executable,
        progress=lambda number, total, found: fresh.append(found),
    )
    assert [r.resumed for r in fresh] == [False, False, False]


def test_a_killed_command_continues_when_run_again(tmp_path: Path) -> None:
    shas = build(tmp_path / "calc")
    argv = [
        sys.executable, "-m", "harnessdrive", "mine", str(tmp_path / "calc"), "--since",
        "2000-01-01", "--validate", "--test-cmd", TEST_COMMAND, "--test-timeout", "30",
        "--sandbox", "none", "-o", str(tmp_path / "suite"),
    ]  # fmt: skip
    with subprocess.Popen(
        argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    ) as run:
        assert run.stderr is not None
        first = run.stderr.readline()  # the first checked commit's progress line
        run.send_signal(signal.SIGTERM)
        rest = run.stderr.read()
    assert first.startswith(f"[1/3] {shas[0][:7]}") and ": kept" in first, first + rest
    assert run.returncode == 130, rest
    assert "Run the same command again to continue" in rest
    again = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr
    lines = [line for line in again.stderr.splitlines() if line.startswith("[")]
    assert "kept, from the journal" in lines[0] and shas[0][:7] in lines[0]
    # A commit may finish between the first line and the signal (and be journaled before its
    # line is printed): the journal holds at least what the stopped run reported, and every
    # commit is checked once in all, never again from scratch.
    reported = {line.split()[1] for line in (first + rest).splitlines() if line.startswith("[")}
    journaled = {line.split()[1] for line in lines if "from the journal" in line}
    assert reported <= journaled, (first + rest, lines)
    assert [line.split()[1] for line in lines] == [sha[:7] for sha in shas]
