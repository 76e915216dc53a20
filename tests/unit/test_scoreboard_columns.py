"""Visible and hidden columns, trials without a verdict, and the compact cost cell."""

from __future__ import annotations

import io
import re

from rich.console import Console

from harnessdrive.grading.verdict import GradingRun, Verdict
from harnessdrive.report.render import render_report
from harnessdrive.report.scoreboard import Report, build_report
from harnessdrive.store.results import Cost
from tests.trial_results import trial_result


def grading_run(passed: int, total: int) -> GradingRun:
    return GradingRun(
        command="pytest",
        exit_code=0 if passed == total else 1,
        timed_out=False,
        seconds=1.0,
        passed=passed,
        total=total,
        failed=total - passed,
        source="junit",
    )


def text(report: Report) -> str:
    console = Console(file=io.StringIO(), width=220, no_color=True)
    console.print(render_report(report))
    return console.file.getvalue()  # type: ignore[attr-defined]


def row_of(output: str, name: str) -> list[str]:
    """The cells of the first table row (or header) that holds ``name``."""
    rows = [re.split("[│┃]", line) for line in output.splitlines()]
    cells = next(row for row in rows if len(row) > 2 and name in (c.strip() for c in row))
    return [cell.strip() for cell in cells[1:-1]]


def test_visible_and_hidden_columns_show_a_pass_of_the_visible_tests_only() -> None:
    fooled = Verdict(outcome="fail", visible=grading_run(1, 1), hidden=grading_run(1, 3))
    solved = Verdict(outcome="pass", visible=grading_run(1, 1), hidden=grading_run(3, 3))
    results = [
        trial_result("t1", "naive", status="completed", outcome="fail", grading=fooled),
        trial_result("t2", "naive", status="completed", outcome="pass", grading=solved),
        trial_result("t1", "good", status="completed", outcome="pass", grading=solved),
        trial_result("t2", "good", status="completed", outcome="pass", grading=solved),
    ]
    report = build_report(results)
    rows = {row.variant: row for row in report.harnesses}
    assert (rows["naive"].visible_passed, rows["naive"].visible_trials) == (2, 2)
    assert (rows["naive"].hidden_passed, rows["naive"].hidden_trials) == (1, 2)
    output = text(report)
    header = row_of(output, "Harness")
    naive = dict(zip(header, row_of(output, "naive"), strict=True))
    assert (naive["Passed"], naive["Visible"], naive["Hidden"]) == ("1 of 2", "2 of 2", "1 of 2")


def test_a_trial_the_grader_could_not_evaluate_says_so_everywhere() -> None:
    results = [
        trial_result(
            "t1",
            "a",
            status="completed",
            outcome="not_graded",
            grading=Verdict(outcome="not_graded", error="setup failed in the grading copy"),
        ),
    ]
    report = build_report(results)
    (row,) = report.could_not_run
    assert (row.could_not_run, row.not_graded) == (0, 1)
    assert row.first_error == "not graded: setup failed in the grading copy"
    assert report.tasks[0].cells["a"].text == "not graded"
    assert "a got no verdict: not graded: setup failed in the grading copy." in report.notes
    output = text(report)
    assert "completed" not in output
    assert "see agent.stderr" not in output
    assert row_of(output, "a")[:3] == ["a", "0", "1"]


def test_a_partly_measured_cost_is_a_short_cell_with_a_footnote() -> None:
    results = [
        trial_result(
            t,
            "a",
            status="completed",
            outcome="pass",
            grading=Verdict(outcome="pass"),
            cost=Cost(source="unmeasured", charged_usd=0.0),
        )
        for t in ("t1", "t2", "t3")
    ]
    output = text(build_report(results))
    assert dict(zip(row_of(output, "Harness"), row_of(output, "a"), strict=True))["$/pass"] == (
        "- +3*"
    )
    assert "+k*: k trials whose cost is not a full measurement" in " ".join(output.split())
