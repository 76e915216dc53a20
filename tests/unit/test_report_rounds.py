"""Reports of trials with several rounds, a score or metrics: the last round decides, totals sum."""

from __future__ import annotations

from datetime import date

from harnessdrive.accounting import PriceBook
from harnessdrive.accounting.plan_pricing import price_variants
from harnessdrive.grading.verdict import Verdict
from harnessdrive.report.scoreboard import build_report
from harnessdrive.store.results import (
    AgentSummary,
    Cost,
    DiffStats,
    RoundRecord,
    Timing,
    Totals,
)
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.agents import SpendingAgent
from harnessdrive.transcript.models import Usage
from tests.trial_results import trial_result
from tests.unit.test_scoreboard_columns import grading_run, row_of, text


def two_rounds() -> tuple[RoundRecord, ...]:
    first = RoundRecord(
        number=1,
        status="completed",
        outcome="fail",
        agent=AgentSummary(calls=3, turns=2, tool_calls=4, usage=Usage(input=900, output=100)),
        diff=DiffStats(files_changed=1, lines_added=1, paths=("a.py",)),
        grading=Verdict(outcome="fail", hidden=grading_run(1, 3)),
        seconds=Timing(agent=30.0),
    )
    last = RoundRecord(
        number=2,
        status="completed",
        outcome="pass",
        agent=AgentSummary(calls=1, turns=1, tool_calls=1, usage=Usage(input=400, output=100)),
        diff=DiffStats(files_changed=2, lines_added=5, lines_deleted=1, paths=("a.py", "b.py")),
        grading=Verdict(outcome="pass", hidden=grading_run(3, 3)),
        seconds=Timing(agent=10.0),
    )
    return (first, last)


def test_totals_sum_every_round() -> None:
    totals = Totals.over(two_rounds())
    assert (totals.rounds, totals.agent_seconds, totals.turns, totals.tool_calls) == (2, 40, 3, 5)
    assert totals.usage == Usage(input=1300, output=200)


def test_a_trial_of_two_rounds_shows_the_last_verdict_and_the_tokens_of_both() -> None:
    rounds = two_rounds()
    result = trial_result(
        "t",
        "improver",
        status="completed",
        outcome="pass",
        rounds=rounds,
        totals=Totals.over(rounds),
    )
    report = build_report([result])
    (row,) = report.trials
    assert (row.outcome, row.rounds, row.tokens) == ("pass", 2, 1500)
    assert (row.hidden_passed, row.hidden_total, row.files_changed, row.paths) == (
        3,
        3,
        2,
        ("a.py", "b.py"),
    )
    assert row.agent_seconds == 40
    (harness,) = report.harnesses
    assert (harness.passed, harness.median_tokens, harness.median_lines_changed) == (1, 1500, 6)
    assert harness.median_minutes == round(40 / 60, 3)


def test_a_schema_1_record_counts_its_one_round_in_its_totals() -> None:
    result = trial_result(
        "t",
        "a",
        status="completed",
        outcome="fail",
        agent={"calls": 2, "turns": 3, "tool_calls": 7, "usage": {"input": 50, "output": 5}},
        seconds={"agent": 12.5},
        grading=Verdict(outcome="fail"),
    )
    assert result.totals == Totals(
        rounds=1, agent_seconds=12.5, turns=3, tool_calls=7, usage=Usage(input=50, output=5)
    )
    assert build_report([result]).trials[0].tokens == 55


def test_a_score_column_only_when_a_grader_gave_a_score() -> None:
    graded = Verdict(outcome="pass", hidden=grading_run(1, 1))
    plain = [
        trial_result("t1", "a", status="completed", outcome="pass", grading=graded),
        trial_result("t2", "a", status="completed", outcome="pass", grading=graded),
    ]
    output = text(build_report(plain))
    assert "Score" not in output
    assert build_report(plain).harnesses[0].mean_score is None

    scored = [
        trial_result(
            "t1",
            "a",
            status="completed",
            outcome="pass",
            grading=graded,
            score=0.5,
            metrics={"x": 2},
        ),
        trial_result("t2", "a", status="completed", outcome="pass", grading=graded, score=1.0),
        trial_result("t1", "b", status="completed", outcome="pass", grading=graded),
        trial_result("t2", "b", status="completed", outcome="fail", grading=graded),
    ]
    report = build_report(scored)
    rows = {row.variant: row for row in report.harnesses}
    assert (rows["a"].mean_score, rows["b"].mean_score) == (0.75, None)
    assert [(t.score, t.metrics) for t in report.trials[:2]] == [(0.5, {"x": 2}), (1.0, {})]
    output = text(report)
    header = row_of(output, "Harness")
    cells = {name: dict(zip(header, row_of(output, name), strict=True)) for name in ("a", "b")}
    assert (cells["a"]["Score"], cells["b"]["Score"]) == ("0.75", "-")
    assert "Score: mean score" in output


def test_a_past_trial_counts_for_a_model_its_first_round_named() -> None:
    spender = "harnessdrive.testing.agents:SpendingAgent"
    planned = VariantSpec(harness=spender, name="s", options={"models": ["gpt-5"]})
    first, last = two_rounds()
    past = trial_result(
        "t",
        spender,
        variant_label="s",
        status="completed",
        outcome="pass",
        rounds=(
            first.model_copy(update={"agent": first.agent.model_copy(update={"model": "gpt-5"})}),
            last,  # this round's agent named no model
        ),
        cost=Cost(usd=0.5, source="computed", charged_usd=0.5),
    )
    found = price_variants(
        [planned],
        {spender: SpendingAgent()},
        PriceBook.bundled(),
        on=date(2026, 11, 29),
        history=[past],
    )
    estimate = found.variants["s"].estimate
    assert estimate is not None and estimate.basis == "history"
