"""``mine --validate --audit``: every task mined is audited and marked beside it."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from harnessdrive.audit.record import AUDIT_FILE
from harnessdrive.cli.app import run_cli
from tests.integration.test_mine_resume import TEST_COMMAND, build

pytestmark = pytest.mark.slow


def test_each_mined_task_is_audited_and_marked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build(tmp_path / "calc")
    suite = tmp_path / "suite"
    argv = [
        "mine", str(tmp_path / "calc"), "--since", "2000-01-01", "--validate", "--audit",
        "--test-cmd", TEST_COMMAND, "--sandbox", "bwrap", "-o", str(suite), "--json",
    ]  # fmt: skip
    capsys.readouterr()
    assert run_cli(argv) == 0
    report = json.loads(capsys.readouterr().out)
    tasks = sorted(p.name for p in (suite / "tasks").iterdir())
    assert len(tasks) == 3
    assert sorted(row["task"] for row in report["audit"]) == tasks
    for task in tasks:
        marked = json.loads((suite / "tasks" / task / AUDIT_FILE).read_text())
        assert marked["task"] == task and marked["exploits"]
        # Each task records when its commit was made, to slice by a model's training cutoff.
        metadata = tomllib.loads((suite / "tasks" / task / "task.toml").read_text())["metadata"]
        date = subprocess.run(
            ["git", "-C", str(tmp_path / "calc"), "log", "-1", "--format=%cI", metadata["commit"]],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert metadata["committed"] == date and date.startswith("20")
        # Each commit changed code (calc.py's constants), so none is refused for it.
        assert metadata["change_kind"] == "code"


def test_audit_without_validate_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["mine", str(tmp_path), "--audit"]
    assert run_cli(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error == "error: --audit audits the suite --validate writes; add --validate"
