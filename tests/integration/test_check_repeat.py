"""``check --repeat N``: a task whose grade gives one input two verdicts is flagged flaky."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.testing.suites import TaskFiles, write_suite


def test_a_task_whose_verdicts_disagree_is_flagged_and_a_steady_one_is_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "graded-once"
    # Fails the first time anything is graded, passes ever after: the same input, two verdicts.
    flaky = f"if [ -e {marker} ]; then exit 0; else touch {marker}; exit 1; fi"
    steady = TaskFiles(
        "steady",
        files={"calc.py": "def add(a, b):\n    return a - b\n"},
        solution={"calc.py": "def add(a, b):\n    return a + b\n"},
        command="grep -q 'a + b' calc.py",
    )
    suite = write_suite(
        tmp_path / "suite",
        [
            steady,
            TaskFiles(
                "flaky",
                files={"a.txt": "x\n"},
                solution={"a.txt": "y\n"},
                command=flaky,
                extra={"grade": {"junit": False}},
            ),
        ],
    )
    args = ["check", str(suite), "--repeat", "3", "--jobs", "1", "--sandbox", "none", "--json"]
    assert run_cli(args) == 1
    tasks = {t["task"]: t for t in json.loads(capsys.readouterr().out)["tasks"]}
    assert tasks["steady"]["ok"] is True
    assert tasks["steady"]["repeats"] == {
        "reference": ["pass", "pass", "pass"],
        "untouched": ["fail", "fail", "fail"],
    }
    flagged = [p for p in tasks["flaky"]["problems"] if p.startswith("flaky:")]
    assert len(flagged) == 1, tasks["flaky"]["problems"]
    assert "over 3 runs" in flagged[0]
    assert run_cli(["check", str(suite), "--repeat", "0"]) == 2
