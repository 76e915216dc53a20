from __future__ import annotations

from harnessdrive.grading.verdict import Verdict
from harnessdrive.report.scoreboard import build_report
from harnessdrive.store.results import Cost, DiffStats, Timing, TrialResult
from tests.trial_results import trial_result


def trial(
    task: str,
    variant: str,
    outcome: str = "pass",
    status: str = "completed",
    usd: float | None = 0.0,
    charged: float = 0.0,
    minutes: float = 1.0,
    lines: int = 10,
) -> TrialResult:
    graded = status in ("completed", "timeout", "crashed")
    return trial_result(
        task,
        variant,
        status=status,
        outcome=outcome if graded else "not_graded",
        seconds=Timing(agent=minutes * 60, total=minutes * 60),
        diff=DiffStats(lines_added=lines),
        grading=Verdict(outcome=outcome) if graded else None,
        cost=Cost(
            usd=usd, source="computed" if usd is not None else "unmeasured", charged_usd=charged
        ),
    )


def test_only_tasks_every_harness_finished_are_compared() -> None:
    results = [
        trial("t1", "a"),
        trial("t1", "b", "fail"),
        trial("t2", "a"),
        trial("t2", "b", status="could_not_run"),
        trial("t3", "a", "fail"),
        trial("t3", "b"),
    ]
    report = build_report(results, variants=["a", "b"])
    assert report.tasks_compared == 2 and report.tasks_total == 3
    rows = {row.variant: row for row in report.harnesses}
    assert (rows["a"].passed, rows["a"].trials) == (1, 2)
    assert (rows["b"].passed, rows["b"].trials) == (1, 2)
    assert rows["b"].could_not_run == 1
    assert any("t2" in note for note in report.notes)
    assert [t.compared for t in report.tasks] == [True, False, True]


def test_rank_by_passes_then_cost_per_pass() -> None:
    results = [
        trial("t1", "cheap", charged=1.0, usd=1.0),
        trial("t2", "cheap", charged=1.0, usd=1.0),
        trial("t1", "dear", charged=5.0, usd=5.0),
        trial("t2", "dear", charged=5.0, usd=5.0),
        trial("t1", "weak", "fail"),
        trial("t2", "weak"),
    ]
    report = build_report(results, variants=["weak", "dear", "cheap"])
    assert [row.variant for row in report.harnesses] == ["cheap", "dear", "weak"]
    cheap = report.harnesses[0]
    assert cheap.cost_per_pass == 1.0 and cheap.total_cost == 2.0


def test_cost_per_pass_counts_failed_trials_and_unmeasured_costs_show() -> None:
    results = [
        trial("t1", "a", charged=3.0, usd=3.0),
        trial("t2", "a", "fail", charged=3.0, usd=3.0),
        trial("t1", "b", usd=None),
        trial("t2", "b", usd=None),
    ]
    rows = {row.variant: row for row in build_report(results).harnesses}
    assert rows["a"].cost_per_pass == 6.0
    assert rows["b"].cost_per_pass is None and rows["b"].unmeasured == 2


def test_a_harness_that_never_finished_is_listed_apart_with_its_error() -> None:
    results = [
        trial("t1", "a"),
        trial("t1", "b", status="could_not_run").with_final_round(
            agent=trial("t1", "b").agent.model_copy(update={"hint": "sign in"})
        ),
    ]
    report = build_report(results)
    assert [row.variant for row in report.harnesses] == ["a"]
    assert [row.variant for row in report.could_not_run] == ["b"]
    assert report.could_not_run[0].first_error == "sign in"
    assert report.tasks_compared == 1


def test_medians_timeouts_tampering_and_repeats() -> None:
    results = [
        trial("t1", "a", minutes=1, lines=4),
        trial("t2", "a", "fail", status="timeout", minutes=3, lines=6),
        trial("t3", "a", "tampered", minutes=2, lines=100),
    ]
    row = build_report(results).harnesses[0]
    assert (row.median_minutes, row.median_lines_changed) == (2.0, 6.0)
    assert (row.timeouts, row.tampered) == (1, 1)
    cells = {t.task: t.cells["a"].text for t in build_report(results).tasks}
    assert cells == {"t1": "pass", "t2": "fail (time limit)", "t3": "tampered"}
    repeated = [trial("t1", "a"), trial("t1", "a", "fail").model_copy(update={"repetition": 2})]
    assert build_report(repeated).tasks[0].cells["a"].text == "1/2 pass"
