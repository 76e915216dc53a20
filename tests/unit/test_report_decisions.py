"""One result set, every view: the text, markdown, JSON and HTML reports and the pytest
plugin's session report give the same rate, rank and verdict for every arm and pair, lead with
the same answer, and never call a baseline best."""

from __future__ import annotations

import html
import io
import json
import math
import random
from pathlib import Path

import pytest
from rich.console import Console

from harnessdrive.grading.verdict import Verdict
from harnessdrive.pytest_plugin.session_report import write_reports
from harnessdrive.report.markdown import escape, render_markdown
from harnessdrive.report.render import render_report
from harnessdrive.report.renderers import reporters
from harnessdrive.report.scoreboard import Report, build_report
from harnessdrive.store.results import Cost, DiffStats, RoundRecord, TrialResult
from harnessdrive.tasks.models import VariantSpec
from tests.trial_results import trial_result

TASKS = [f"t{i:02d}" for i in range(10)]
RATES = {"careful": 0.9, "fast": 0.6, "cheap": 0.2, "reference": 1.0, "tuned": 0.95}


def _trial(task: str, arm: str, repetition: int, passed: bool, **fields: object) -> TrialResult:
    harness = "reference" if arm == "reference" else "command"
    values: dict[str, object] = {
        "trial_id": f"s/{task}/{arm}/r{repetition}",
        "repetition": repetition,
        "harness": harness,
        "variant": VariantSpec(harness=harness, name=arm, baseline=arm == "tuned"),
        "status": "completed",
        "outcome": "pass" if passed else "fail",
        "grading": Verdict(outcome="pass" if passed else "fail"),
        "cost": Cost(usd=0.1, source="computed", charged_usd=RATES[arm] / 2 + 0.01 * len(task)),
        **fields,
    }
    variant = values.pop("variant")
    found = trial_result(task, arm, **values)
    return found.model_copy(update={"variant": variant})


def results() -> list[TrialResult]:
    rng = random.Random(7)
    found = []
    for arm, rate in RATES.items():
        for task in TASKS:
            repeats = 1 if arm == "cheap" else rng.randint(1, 3)  # unequal repeats
            for repetition in range(1, repeats + 1):
                found.append(_trial(task, arm, repetition, rng.random() < rate))
    # A trial that could not run: its task stays compared, on the trials that finished.
    found.append(
        _trial("t03", "fast", 9, False, status="could_not_run", outcome="not_graded", grading=None)
    )
    return found


def _text(report: Report) -> str:
    console = Console(file=io.StringIO(), width=400, no_color=True)
    console.print(render_report(report))
    return " ".join(console.file.getvalue().split())  # type: ignore[attr-defined]


def test_every_view_gives_the_same_rates_ranks_and_verdicts(tmp_path: Path) -> None:
    trials = results()
    report = build_report(trials)
    stats = report.statistics
    # Baselines: the built-in reference and the variant marked baseline = true.
    assert {a.variant for a in stats.arms if a.baseline} == {"reference", "tuned"}
    assert stats.best not in ("reference", "tuned") and stats.best is not None
    assert stats.compared == ("careful", "fast", "cheap") and stats.family == 3
    assert report.headline == stats.answer and report.headline.startswith(f"Best: {stats.best}, ")

    rows = {row.variant: row for row in report.harnesses}
    for arm in stats.arms:
        assert rows[arm.variant].pass_rate == arm.pass_rate
        assert rows[arm.variant].rank == arm.rank
        assert rows[arm.variant].interval == arm.interval
    assert [row.variant for row in report.harnesses] == [a.variant for a in stats.arms]

    text = _text(report)
    markdown = " ".join(render_markdown(report).split())
    page = reporters()["html"].render(report)
    as_json = json.loads(str(reporters()["json"].render(report)))
    assert text.startswith(" ".join(report.headline.split()))
    assert markdown.startswith(" ".join(escape(report.headline).split()))
    assert f'<h1 id="answer">{html.escape(report.headline)}</h1>' in str(page)
    assert as_json["headline"] == report.headline
    assert as_json["statistics"] == json.loads(stats.model_dump_json())
    for arm in stats.arms:
        shown = f"{arm.variant} {arm.pass_rate * 100:.0f}%"  # type: ignore[operator]
        assert shown in text and shown in markdown
    for c in stats.comparisons:
        line = f"{c.first} against {c.second}: {c.verdict}:"
        assert line in text and line.replace("_", "\\_") in markdown
        assert f'<b class="verdict">{c.verdict}</b>' in str(page)

    written = write_reports(
        tmp_path / "session",
        "session",
        [
            {
                "result": t.model_dump(mode="json", by_alias=True),
                "folder": str(tmp_path / "trials" / t.trial_id),
            }
            for t in trials
        ],
    )
    session = json.loads(written.json_path.read_text())
    assert session["headline"] == report.headline
    assert session["statistics"]["comparisons"] == as_json["statistics"]["comparisons"]
    assert [
        (h["variant"], h["rank"], h["pass_rate"], h["versus_best"]) for h in session["harnesses"]
    ] == [(row.variant, row.rank, row.pass_rate, row.versus_best) for row in report.harnesses]


def test_rank_follows_the_mean_per_task_rate_not_the_pass_count() -> None:
    # many: 3 repeats of every task, passing 1 of 3 (48% of its trials would be close);
    # few: one trial per task, passing 5 of 6. Counting trials ranks many first; tasks do not.
    trials = []
    for i, task in enumerate(TASKS[:6]):
        for r in range(1, 4):
            trials.append(_trial(task, "careful", r, r == 1 or (i < 2 and r == 2)))
        trials.append(_trial(task, "fast", 1, i != 0))
    report = build_report(trials)
    rows = [(row.variant, row.passed, row.pass_rate) for row in report.harnesses]
    assert rows[0][0] == "fast" and rows[0][1] < rows[1][1]
    assert report.statistics.best == "fast"


def test_a_cheaper_noisier_arm_stays_on_the_frontier() -> None:
    trials = []
    for i, task in enumerate(TASKS):
        trials.append(
            _trial(task, "careful", 1, True, cost=Cost(usd=0.5, source="computed", charged_usd=0.5))
        )
        cheap = 0.01 if i % 5 < 3 else 0.9  # cheaper than careful on average, far noisier
        trials.append(
            _trial(
                task,
                "fast",
                1,
                i != 0,
                cost=Cost(usd=cheap, source="computed", charged_usd=cheap),
            )
        )
    report = build_report(trials)
    arms = {a.variant: a for a in report.statistics.arms}
    assert arms["fast"].cost_per_trial is not None and arms["fast"].cost_per_trial < 0.5
    assert arms["fast"].cost_interval is not None
    assert arms["fast"].cost_interval.high > arms["careful"].cost_high  # type: ignore[operator]
    assert set(report.statistics.frontier) == {"careful", "fast"}
    (c,) = report.statistics.comparisons
    assert c.cost_difference is not None and c.cost_interval is not None
    saving = 0.5 - (6 * 0.01 + 4 * 0.9) / 10  # careful's mean cost a task minus fast's
    assert c.cost_difference == pytest.approx(saving if c.first == "careful" else -saving, abs=1e-4)
    assert c.cost_interval.low < c.cost_difference < c.cost_interval.high


def test_accepted_only_counts_a_rejected_pass_as_no_pass() -> None:
    trials = [_trial(task, "careful", 1, True) for task in TASKS[:6]]
    trials += [_trial(task, "fast", 1, task != "t00") for task in TASKS[:6]]
    reviews = {t.trial_id: "rejected" for t in trials if t.variant_label == "careful"}
    reviews.update({t.trial_id: "accepted" for t in trials if t.variant_label == "fast"})
    plain = build_report(trials, reviews=reviews)
    strict = build_report(trials, reviews=reviews, accepted_only=True)
    assert plain.statistics.best == "careful"
    assert strict.statistics.best == "fast" and strict.statistics.accepted_only
    careful = next(a for a in plain.statistics.arms if a.variant == "careful")
    assert careful.pass_rate == 1.0 and careful.accepted_rate == 0.0
    assert "0 of 6 reviewed, 0%" in _text(plain)


def test_improvement_and_rules_are_compared_paired_and_a_failed_gate_is_no_improvement() -> None:
    trials = []
    for i, task in enumerate(TASKS[:6]):
        doubled = {"improve.baseline": 100.0, "improve.log_ratio": math.log(2)}
        # fast's first task failed its gate: no ratio recorded, which is no improvement.
        fast = {"improve.baseline": 100.0} if i == 0 else {**doubled, "improve.log_ratio": 0.5}
        rules = {"rule.sorted.passed": 3.0, "rule.sorted.cases": 4.0}
        trials.append(_trial(task, "careful", 1, True, metrics={**doubled, **rules}))
        trials.append(
            _trial(
                task,
                "fast",
                1,
                i % 2 == 0,
                metrics={**fast, "rule.sorted.passed": 1.0, "rule.sorted.cases": 4.0},
            )
        )
    report = build_report(trials)
    (c,) = report.statistics.comparisons
    found = {m.measure: m for m in c.measures}
    improvement = found["improvement"]
    expected = [math.log(2) - 0.0] + [math.log(2) - 0.5] * 5
    assert improvement.tasks == 6
    assert improvement.difference == pytest.approx(sum(expected) / 6, abs=1e-6)
    assert improvement.interval is not None and improvement.interval.low > 0
    rule = found["rule sorted"]
    assert rule.difference == pytest.approx(0.5) and rule.interval is None  # no spread
    fast = next(a for a in report.statistics.arms if a.variant == "fast")
    assert fast.improvement is not None and fast.improvement.tasks == 6
    assert fast.improvement.ratio == pytest.approx(math.exp((0 + 0.5 * 5) / 6), rel=1e-5)
    assert f"improvement x{math.exp(sum(expected) / 6):.3g} [x" in _text(report)


def test_a_flaky_task_names_what_varied_the_grading_or_the_agent() -> None:
    def trial(task: str, arm: str, repetition: int, passed: bool, lines: int) -> TrialResult:
        change = DiffStats(files_changed=1, lines_added=lines, paths=("a.py",), patch_bytes=lines)
        outcome = "pass" if passed else "fail"
        record = RoundRecord(status="completed", outcome=outcome, diff=change)
        return trial_result(
            task,
            arm,
            trial_id=f"s/{task}/{arm}/r{repetition}",
            repetition=repetition,
            status="completed",
            outcome=outcome,
            rounds=(record,),
        )

    trials = [
        *(trial("t00", "fast", 1, True, 1), trial("t00", "fast", 2, False, 2)),  # other changes
        *(trial("t01", "fast", 1, True, 1), trial("t01", "fast", 2, False, 1)),  # the same one
        *(trial("t00", "reference", 1, True, 1), trial("t00", "reference", 2, False, 2)),
        *(trial("t00", "careful", 1, True, 1), trial("t00", "careful", 2, True, 2)),  # steady
        *(trial("t01", arm, 1, True, 1) for arm in ("careful", "reference")),
    ]
    flaky = [(f.task, f.variant, f.reason) for f in build_report(trials).statistics.flaky]
    assert flaky == [
        ("t00", "fast", "agent's spread across repeats"),
        ("t00", "reference", "grading is nondeterministic"),
        ("t01", "fast", "grading is nondeterministic"),
    ]
