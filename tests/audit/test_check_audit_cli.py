"""``check --audit``: the summary names the untrusted task with its exploit and fix, and exits 1;
the JSON carries each task's audit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.testing.suites import write_suite
from tests.audit import weak_tasks


def test_check_audit_names_the_weak_task_and_its_exploit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path, [weak_tasks.type_only()])
    assert run_cli(["check", str(suite), "--audit", "--jobs", "2"]) == 1
    out = capsys.readouterr().out
    assert "type-only: exploit constant-stub got a pass; fix: the hidden tests accept" in out
    assert "1 of 1 tasks untrusted: type-only" in out
    record = json.loads((suite / "tasks" / "type-only" / "audit.json").read_text())
    assert record["trusted"] is False

    assert run_cli(["check", str(suite), "--audit", "--jobs", "2", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False
    assert data["audit"][0]["task"] == "type-only"
