"""A weakened hidden test flips a trusted task to untrusted, and the scoreboard then leaves the
task out and says so; ``--all-tasks`` (no untrusted list) counts it again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.audit.counting import untrusted_tasks
from harnessdrive.audit.record import ExploitOutcome, TaskAudit, write_audit
from harnessdrive.audit.runner import audit
from harnessdrive.cli.app import run_cli
from harnessdrive.report.scoreboard import build_report
from harnessdrive.store.store import Store
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import TaskFiles, write_suite
from tests.audit import weak_tasks
from tests.integration.test_until_decided import CHANCE
from tests.trial_results import trial_result

_TYPE_ONLY = "from calc import add\n\n\ndef test_add():\n    assert isinstance(add(2, 3), int)\n"


def _scoreboard(untrusted: list[str]) -> tuple[int, tuple[str, ...]]:
    results = [
        trial_result(task, variant, status="completed", outcome=outcome)
        for task in ("sound", "other")
        for variant, outcome in (("a", "pass"), ("b", "fail"))
    ]
    report = build_report(results, untrusted=untrusted)
    return report.tasks_total, report.notes


def test_weakened_hidden_test_leaves_the_task_out(tmp_path: Path) -> None:
    folder = write_suite(tmp_path, [weak_tasks.sound()])
    audit(load_suite(folder), logs=tmp_path / "logs-1", jobs=2)
    assert untrusted_tasks(load_suite(folder).tasks) == []
    assert _scoreboard([])[0] == 2

    (folder / "tasks" / "sound" / "hidden" / "tests" / "test_hidden.py").write_text(_TYPE_ONLY)
    weakened = load_suite(folder)
    # The old record is of another version of the task: it no longer speaks for it.
    assert untrusted_tasks(weakened.tasks) == []
    audit(weakened, logs=tmp_path / "logs-2", jobs=2)
    untrusted = untrusted_tasks(load_suite(folder).tasks)
    assert untrusted == ["sound"]

    total, notes = _scoreboard(untrusted)
    assert total == 1
    assert any(
        "Left out 1 task the audit marked untrusted" in note and "sound" in note for note in notes
    )
    assert _scoreboard([])[0] == 2


def _task(task_id: str) -> TaskFiles:
    return TaskFiles(
        task_id,
        files={"state.txt": "broken\n"},
        hidden={"check.sh": "grep -qx fixed state.txt\n"},
        solution={"state.txt": "fixed\n"},
        command="sh check.sh",
    )


def test_a_run_that_decides_as_it_goes_leaves_untrusted_tasks_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arms = [
        {"harness": CHANCE, "name": name, "options": {"rate": rate, "seed": seed}}
        for name, seed, rate in (("strong", 0, 0.9), ("weak", 1, 0.1))
    ]
    suite = write_suite(tmp_path, [_task(t) for t in ("t0", "t1", "t2")], variants=arms)
    task = load_suite(suite).tasks[1]
    # The audit found t1 untrusted: an exploit got a pass on this very version of it.
    record = TaskAudit(task=task.id, fingerprint=task.fingerprint)
    record.exploits.append(ExploitOutcome("constant-stub", "pass", succeeded=True, fix="assert"))
    write_audit(task.folder, record)
    argv = ["run", str(suite), "--until-decided", "--margin", "0.5", "--max-repeats", "4"]
    common = ["--sandbox", "none", "--json"]
    results = tmp_path / "results"
    capsys.readouterr()
    assert run_cli([*argv, *common, "--results", str(results)]) == 0
    assert "Left out 1 task the audit marked untrusted or invalid: t1" in capsys.readouterr().err
    assert {r.task for r in Store(results).all_latest()} == {"t0", "t2"}
    (decisions,) = [json.loads(p.read_text()) for p in (results / "decisions").glob("*.json")]
    assert decisions["tasks"] == 2
    # --all-tasks counts it again: it runs, and the decisions count three tasks.
    again = tmp_path / "again"
    assert run_cli([*argv, *common, "--all-tasks", "--results", str(again)]) == 0
    assert {r.task for r in Store(again).all_latest()} == {"t0", "t1", "t2"}
