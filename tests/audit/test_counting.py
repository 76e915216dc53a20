"""A weakened hidden test flips a trusted task to untrusted, and the scoreboard then leaves the
task out and says so; ``--all-tasks`` (no untrusted list) counts it again."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.audit.counting import untrusted_tasks
from harnessdrive.audit.runner import audit
from harnessdrive.report.scoreboard import build_report
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import write_suite
from tests.audit import weak_tasks
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
