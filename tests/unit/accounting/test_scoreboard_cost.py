"""Cost on the scoreboard: cost per pass over all spend, median tokens, +k* (footnoted)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from tests.trial_results import trial_result

from harnessdrive.grading.verdict import Verdict
from harnessdrive.report.render import render_report
from harnessdrive.report.scoreboard import build_report
from harnessdrive.store.results import AgentSummary, Cost, TrialResult
from harnessdrive.transcript import Usage


def trial(
    task: str, variant: str, outcome: str, cost: Cost, tokens: int = 0, **extra: Any
) -> TrialResult:
    return trial_result(
        task,
        variant,
        status=extra.pop("status", "completed"),
        outcome=outcome,
        started="2026-11-29T10:00:00Z",
        finished="2026-11-29T10:01:00Z",
        grading=Verdict(outcome=outcome),
        agent=AgentSummary(calls=1 if tokens else 0, usage=Usage(input=tokens)),
        cost=cost,
        **extra,
    )


def computed(usd: float, **extra: Any) -> Cost:
    return Cost(usd=usd, source="computed", charged_usd=usd, **extra)


def test_cost_per_pass_counts_failed_trials_and_flags_what_was_not_measured() -> None:
    results = [
        trial("a", "x", "pass", computed(0.40), tokens=100),
        trial("b", "x", "fail", computed(0.20), tokens=300),
        trial("c", "x", "pass", Cost(usd=1.0, source="estimated", charged_usd=1.0), tokens=0),
        trial("a", "y", "pass", computed(0.10, reported_usd=0.2, mismatch=True), tokens=1000),
        trial("b", "y", "pass", computed(0.10), tokens=2000),
        trial("c", "y", "fail", computed(0.10), tokens=3000),
    ]
    report = build_report(results)
    rows = {row.variant: row for row in report.harnesses}
    x, y = rows["x"], rows["y"]
    assert (x.total_cost, x.cost_per_pass, x.unmeasured) == (1.6, 0.8, 1)
    assert x.median_tokens == 200  # only trials that logged usage
    assert (y.cost_per_pass, y.unmeasured, y.median_tokens, y.cost_mismatches) == (
        0.15,
        0,
        2000,
        1,
    )
    assert any("charged a high estimate" in note for note in report.notes)
    assert any("more than 2% apart" in note and "(y)" in note for note in report.notes)

    console = Console(width=200, no_color=True)
    with console.capture() as captured:
        console.print(render_report(report))
    text = captured.get()
    assert "$0.80 +1*" in text
    assert "$0.15 (!)" in text
    assert "2k" in text  # y's median tokens


def test_nothing_measured_means_no_cost_per_pass() -> None:
    unmeasured = Cost(source="unmeasured", charged_usd=0.0)
    report = build_report([trial("a", "cmd", "pass", unmeasured)])
    (row,) = report.harnesses
    assert (row.cost_per_pass, row.unmeasured, row.median_tokens) == (None, 1, None)


def test_skipped_trials_are_neither_spend_nor_unmeasured() -> None:
    results = [
        trial("a", "x", "pass", computed(0.5), tokens=10),
        trial("b", "x", "not_graded", Cost(usd=0.0, source="none"), status="skipped"),
    ]
    (row,) = build_report(results).harnesses
    assert (row.cost_per_pass, row.unmeasured) == (0.5, 0)
