"""The scoreboard marks hidden counts that only the exit status decided."""

from __future__ import annotations

from harnessdrive.grading.verdict import GradingRun, Verdict
from harnessdrive.report.scoreboard import EXIT_CODE_MARK, build_report
from harnessdrive.store.results import TrialResult
from tests.trial_results import trial_result


def graded(task: str, variant: str, source: str) -> TrialResult:
    run = GradingRun(command="t", exit_code=0, timed_out=False, seconds=0.1, passed=1, total=1,
                     source=source)  # type: ignore[arg-type]  # fmt: skip
    verdict = Verdict(outcome="pass", hidden=run)
    return trial_result(task, variant, status="completed", outcome="pass", grading=verdict)


def test_a_cell_decided_by_the_exit_code_alone_is_marked_and_explained() -> None:
    report = build_report([graded("a", "x", "exit_code"), graded("b", "x", "junit")])
    cells = {row.task: row.cells["x"].text for row in report.tasks}
    assert cells == {"a": "pass" + EXIT_CODE_MARK, "b": "pass"}
    assert [t.hidden_source for t in report.trials] == ["exit_code", "junit"]
    assert any("exit status alone decided" in note for note in report.notes)


def test_no_mark_and_no_note_when_every_count_comes_from_a_report() -> None:
    report = build_report([graded("a", "x", "junit")])
    assert report.tasks[0].cells["x"].text == "pass"
    assert not any("exit status alone" in note for note in report.notes)
