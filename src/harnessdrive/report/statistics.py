"""The report's statistics: the comparison model of stats/decisions.py over the finished trials
on the compared tasks, plus pass@k, flaky tasks, the Pareto frontier, improvement ratios and
per-rule rates (docs/report.md). Every view (text, markdown, JSON, HTML, ``compare``, the
pytest plugin's session report) reads these and nothing else, so they cannot disagree."""

from __future__ import annotations

import statistics as pystats
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from harnessdrive.report.arm_inputs import arm_inputs
from harnessdrive.report.flaky import flaky_rows
from harnessdrive.report.stat_models import (
    CONFIDENCE,
    DEFAULT_SEED,
    ArmStats,
    Bounds,
    Comparison,
    FlakyRow,
    MeasureDifference,
    PairedTaskRow,
    ProvenanceRow,
    RatioStats,
    RuleStats,
    Statistics,
)
from harnessdrive.stats import ParetoPoint, pareto_frontier, pass_at_k, pass_hat_k
from harnessdrive.stats.answer import answer, settles
from harnessdrive.stats.decisions import MIN_TASKS, ArmSummary, Decisions, PairDecision, decide
from harnessdrive.stats.improvement import geometric_ratio, rule_rates
from harnessdrive.stats.secondary import paired_mean_difference
from harnessdrive.store.results import TrialResult

__all__ = [
    "CONFIDENCE",
    "DEFAULT_SEED",
    "ArmStats",
    "Bounds",
    "Comparison",
    "FlakyRow",
    "MeasureDifference",
    "PairedTaskRow",
    "ProvenanceRow",
    "RatioStats",
    "RuleStats",
    "Statistics",
    "analyse",
    "comparison_row",
]

LOG_RATIO = "improve.log_ratio"
"""The metric an improvement trial records its natural-log improvement ratio under."""
IMPROVEMENT_MARK = "improve.baseline"
"""Every improvement trial records its baseline, gate passed or not."""


def analyse(
    results: Sequence[TrialResult],
    variants: Sequence[str],
    *,
    reviews: Mapping[str, str] | None = None,
    accepted_only: bool = False,
    confidence: float = CONFIDENCE,
    margin: float | None = None,
    min_tasks: int = MIN_TASKS,
    seed: int = DEFAULT_SEED,
) -> Statistics:
    """The statistics of the finished trials ``results`` of the arms ``variants``."""
    inputs = arm_inputs(results, variants, reviews=reviews, accepted_only=accepted_only)
    decided = decide(inputs, confidence=confidence, margin=margin, min_tasks=min_tasks, seed=seed)
    by_arm = {v: [r for r in results if r.variant_label == v] for v in variants}
    measured = {v: ArmMeasures.of(by_arm[v]) for v in variants}
    outcomes = {arm.name: arm.outcomes for arm in inputs}
    rows = [
        _arm(summary, outcomes[summary.name], by_arm[summary.name], measured[summary.name], seed)
        for summary in decided.arms
    ]
    points = [
        ParetoPoint(row.variant, row.pass_rate, row.cost_per_trial)
        for row in rows
        if row.pass_rate is not None and row.cost_per_trial is not None
    ]
    frontier = pareto_frontier(points)
    accepted = _accepted_rates(results, variants, reviews)
    rows = [
        row.model_copy(
            update={
                "on_frontier": row.variant in frontier,
                "accepted_rate": accepted.get(row.variant),
            }
        )
        for row in rows
    ]
    return Statistics(
        confidence=confidence,
        margin=margin,
        min_tasks=min_tasks,
        seed=seed,
        accepted_only=accepted_only,
        answer=answer(decided),
        best=decided.best,
        tied=decided.tied,
        compared=decided.compared,
        family=decided.family,
        fewest_tasks=decided.fewest_tasks,
        arms=tuple(rows),
        comparisons=tuple(
            comparison_row(c, decided).model_copy(
                update={"measures": measures(measured[c.first], measured[c.second], c.level, seed)}
            )
            for c in decided.comparisons
        ),
        flaky=tuple(
            FlakyRow(
                task=f.task, variant=f.variant, passes=f.passes, trials=f.trials, reason=f.reason
            )
            for f in flaky_rows(results, inputs)
        ),
        frontier=tuple(frontier),
    )


def comparison_row(found: PairDecision, decided: Decisions) -> Comparison:
    tasks = found.tasks
    return Comparison(
        first=found.first,
        second=found.second,
        tasks=tuple(
            PairedTaskRow(
                task=t.task,
                first=round(t.first, 6),
                second=round(t.second, 6),
                first_trials=t.first_trials,
                second_trials=t.second_trials,
                difference=round(t.difference, 6),
            )
            for t in tasks
        ),
        first_mean=_round(pystats.fmean(t.first for t in tasks) if tasks else None),
        second_mean=_round(pystats.fmean(t.second for t in tasks) if tasks else None),
        difference=_round(found.difference),
        interval=Bounds.of(found.interval),
        confidence=round(found.level, 6),
        interval_method=found.interval_method,
        test=found.test,
        p_value=round(found.p_value, 6),
        p_error=round(found.p_error, 6),
        p_adjusted=round(found.p_adjusted, 6),
        threshold=round(found.threshold, 6),
        verdict=found.verdict,
        reason=found.reason,
        settle=settles(found).removeprefix(": ") or None,
        more_tasks=found.settle.more_tasks if found.settle else None,
        more_repeats=found.settle.repeats if found.settle else None,
        p_better=round(found.p_better, 6),
        wins=sum(t.difference > 0 for t in tasks),
        losses=sum(t.difference < 0 for t in tasks),
        ties=sum(t.difference == 0 for t in tasks),
        differing=found.differing,
        unequal_repeats=found.unequal_repeats,
        family=decided.family,
        cost_difference=_round(found.cost_difference),
        cost_interval=Bounds.of(found.cost_interval),
        seed=decided.seed,
    )


def _arm(
    summary: ArmSummary,
    outcomes: Mapping[str, Sequence[float]],
    results: Sequence[TrialResult],
    measured: ArmMeasures,
    seed: int,
) -> ArmStats:
    repeats = min((len(v) for v in outcomes.values() if v), default=0)
    at_k: dict[str, float] = {}
    hat_k: dict[str, float] = {}
    if repeats >= 2:
        for k in range(1, repeats + 1):
            at_k[str(k)] = _mean_over(outcomes, pass_at_k, k)
            hat_k[str(k)] = _mean_over(outcomes, pass_hat_k, k)
    cost = summary.cost
    ratio = geometric_ratio(measured.improvement, seed=seed)
    return ArmStats(
        variant=summary.name,
        tasks=summary.tasks,
        trials=summary.trials,
        pass_rate=round(summary.rate, 6),
        interval=Bounds.of(summary.interval),
        rank=summary.rank,
        tied=summary.tied,
        baseline=summary.baseline,
        effective_trials=round(summary.effective_trials, 3),
        pass_at_k=at_k,
        pass_hat_k=hat_k,
        cost_per_trial=_round(cost.per_task if cost else None),
        cost_interval=Bounds.of(cost.interval if cost else None),
        cost_high=_round(
            (cost.interval.high if cost.interval else cost.per_task) if cost else None
        ),
        cost_per_pass=_round(cost.per_pass if cost else None),
        cost_per_pass_interval=Bounds.of(cost.per_pass_interval if cost else None),
        improvement=RatioStats(
            ratio=round(ratio.ratio, 6), interval=Bounds.of(ratio.interval), tasks=ratio.tasks
        )
        if ratio
        else None,
        rules=tuple(
            RuleStats(
                rule=r.rule,
                passed=r.passed,
                cases=r.cases,
                rate=round(r.rate, 6),
                interval=Bounds(low=round(r.interval.low, 6), high=round(r.interval.high, 6)),
            )
            for r in rule_rates([r.metrics for r in results])
        ),
    )


def _accepted_rates(
    results: Sequence[TrialResult], variants: Sequence[str], reviews: Mapping[str, str] | None
) -> dict[str, float]:
    reviewed = {r.variant_label for r in results if reviews and r.trial_id in reviews}
    found = {}
    for arm in arm_inputs(results, variants, reviews=reviews, accepted_only=True):
        per_task = [pystats.fmean(v) for v in arm.outcomes.values() if v]
        if arm.name in reviewed and per_task:
            found[arm.name] = round(pystats.fmean(per_task), 6)
    return found


def improvement_logs(results: Sequence[TrialResult]) -> dict[str, list[float]]:
    """Each task's natural-log improvement ratios; a trial of an improvement task whose final
    state failed its gate (no ratio recorded) or that tampered counts as no improvement (0),
    not as missing."""
    logs: dict[str, list[float]] = {}
    for result in results:
        if IMPROVEMENT_MARK in result.metrics or LOG_RATIO in result.metrics:
            value = 0.0 if result.outcome == "tampered" else result.metrics.get(LOG_RATIO, 0.0)
            logs.setdefault(result.task, []).append(value)
    return logs


def rule_scores(results: Sequence[TrialResult]) -> dict[str, dict[str, list[float]]]:
    """Rule name to task to each trial's pass rate of that rule's cases."""
    found: dict[str, dict[str, list[float]]] = {}
    for result in results:
        for rate in rule_rates([result.metrics]):
            found.setdefault(rate.rule, {}).setdefault(result.task, []).append(rate.rate)
    return found


@dataclass(frozen=True)
class ArmMeasures:
    """An arm's per-task measures besides the pass rate, read from its trials once (an arm
    takes part in every comparison of the family)."""

    improvement: dict[str, list[float]]
    rules: dict[str, dict[str, list[float]]]

    @classmethod
    def of(cls, results: Sequence[TrialResult]) -> ArmMeasures:
        return cls(improvement_logs(results), rule_scores(results))


def measures(
    first: ArmMeasures, second: ArmMeasures, level: float, seed: int
) -> tuple[MeasureDifference, ...]:
    """The improvement ratio and each rule's pass rate of ``first`` against ``second``."""
    pairs = [("improvement", first.improvement, second.improvement)]
    pairs += [
        (f"rule {rule}", first.rules[rule], second.rules[rule])
        for rule in sorted(first.rules)
        if rule in second.rules
    ]
    found = []
    for name, mine, theirs in pairs:
        difference = paired_mean_difference(mine, theirs, level, seed=seed)
        if difference is not None:
            found.append(
                MeasureDifference(
                    measure=name,
                    difference=round(difference.difference, 6),
                    interval=Bounds.of(difference.interval),
                    p_value=round(difference.p_value, 6),
                    tasks=difference.tasks,
                )
            )
    return tuple(found)


def _mean_over(
    outcomes: Mapping[str, Sequence[float]], rule: Callable[[int, int, int], float], k: int
) -> float:
    values = []
    for v in outcomes.values():
        if v:
            values.append(rule(len(v), int(sum(x >= 1.0 for x in v)), k))
    return round(pystats.fmean(values), 6)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
