"""The report's statistics: intervals, pass@k, the comparison of each arm against the best,
flaky tasks, the Pareto frontier, improvement ratios and per-rule rates (docs/report.md).

Everything is computed from the finished trials on the compared tasks, as the scoreboard counts
them. An arm's outcomes are task id to the verdicts of its repeats (1.0 pass, 0.0 otherwise).
"""

from __future__ import annotations

import statistics as pystats
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from harnessdrive.stats import (
    MIN_PAIRED_TASKS,
    Interval,
    PairedComparison,
    ParetoPoint,
    compare_paired,
    flaky_tasks,
    holm,
    mean_interval,
    pareto_frontier,
    pass_at_k,
    pass_hat_k,
    wilson,
)
from harnessdrive.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from harnessdrive.stats.improvement import geometric_ratio, rule_rates
from harnessdrive.store.results import TrialResult

CONFIDENCE = 0.95
LOG_RATIO = "improve.log_ratio"
"""The metric an improvement trial records its natural-log improvement ratio under."""
REFERENCE_HARNESS = "reference"

Arms = dict[str, dict[str, list[float]]]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Bounds(_Model):
    low: float
    high: float

    @classmethod
    def of(cls, interval: Interval | None) -> Bounds | None:
        if interval is None:
            return None
        return cls(low=round(interval.low, 6), high=round(interval.high, 6))


class RatioStats(_Model):
    ratio: float
    interval: Bounds | None
    tasks: int


class RuleStats(_Model):
    rule: str
    passed: float
    cases: float
    rate: float
    interval: Bounds


class ArmStats(_Model):
    variant: str
    tasks: int
    trials: int
    pass_rate: float | None
    """The mean over tasks of each task's pass rate (repeats averaged first)."""
    interval: Bounds | None
    """Wilson's interval counting tasks, not trials: repeats of one task are not independent."""
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    """k to the unbiased pass@k, for k up to the fewest repeats of a task (when 2 or more)."""
    pass_hat_k: dict[str, float] = Field(default_factory=dict)
    cost_per_trial: float | None = None
    cost_high: float | None = None
    """The pessimistic cost per trial: the upper bound of a normal interval of the mean."""
    on_frontier: bool = False
    improvement: RatioStats | None = None
    rules: tuple[RuleStats, ...] = ()


class PairedTaskRow(_Model):
    task: str
    first: float
    second: float
    first_trials: int
    second_trials: int
    difference: float


class ProvenanceRow(_Model):
    field: str
    first: tuple[str, ...]
    second: tuple[str, ...]
    why: str


class Comparison(_Model):
    first: str
    second: str
    tasks: tuple[PairedTaskRow, ...]
    first_mean: float | None
    second_mean: float | None
    difference: float | None
    interval: Bounds | None
    confidence: float
    wins: int
    losses: int
    ties: int
    p_value: float
    p_adjusted: float
    """Holm-adjusted over every comparison made together (the p-value itself when one)."""
    test: str
    verdict: str
    min_tasks: int
    unpaired: int
    tasks_needed: int | None
    seed: int = DEFAULT_SEED
    resamples: int = DEFAULT_RESAMPLES
    provenance: tuple[ProvenanceRow, ...] = ()
    """Where the two arms' trials differ beyond what their variants say (``compare`` only)."""


class FlakyRow(_Model):
    task: str
    variant: str
    passes: float
    trials: int
    reason: str


class Statistics(_Model):
    confidence: float = CONFIDENCE
    min_tasks: int = MIN_PAIRED_TASKS
    seed: int = DEFAULT_SEED
    resamples: int = DEFAULT_RESAMPLES
    best: str | None = None
    arms: tuple[ArmStats, ...] = ()
    versus_best: tuple[Comparison, ...] = ()
    """Each other arm against the best one (``first`` the arm, ``second`` the best)."""
    flaky: tuple[FlakyRow, ...] = ()
    frontier: tuple[str, ...] = ()
    """Arms on the Pareto frontier of pass rate against cost per trial, each at its pessimistic
    bound, cheapest first."""

    def row_fields(self, variant: str) -> dict[str, object]:
        """What the scoreboard row of ``variant`` shows of these statistics."""
        arm = next((a for a in self.arms if a.variant == variant), None)
        versus = next((c.verdict for c in self.versus_best if c.first == variant), None)
        return {
            "interval": arm.interval if arm else None,
            "versus_best": "best" if variant == self.best else versus,
        }


def arm_outcomes(results: Sequence[TrialResult], variants: Sequence[str]) -> Arms:
    """Each variant's pass/fail per task, in ``variants`` order."""
    arms: Arms = {v: {} for v in variants}
    for result in results:
        if result.variant_label in arms:
            value = 1.0 if result.outcome == "pass" else 0.0
            arms[result.variant_label].setdefault(result.task, []).append(value)
    return arms


def analyse(
    results: Sequence[TrialResult],
    ranked: Sequence[str],
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    min_tasks: int = MIN_PAIRED_TASKS,
) -> Statistics:
    """The statistics of the finished trials ``results`` of the arms ``ranked`` (best first)."""
    arms = arm_outcomes(results, ranked)
    by_arm = {v: [r for r in results if r.variant_label == v] for v in ranked}
    rows = [_arm(v, arms[v], by_arm[v], seed, resamples) for v in ranked]
    points = [
        ParetoPoint(row.variant, row.interval.low, row.cost_high)
        for row in rows
        if row.interval is not None and row.cost_high is not None
    ]
    frontier = pareto_frontier(points)
    rows = [row.model_copy(update={"on_frontier": row.variant in frontier}) for row in rows]
    best = ranked[0] if ranked else None
    others = list(ranked[1:])
    versus = compare_many(
        [(v, best) for v in others if best],
        arms,
        seed=seed,
        resamples=resamples,
        min_tasks=min_tasks,
    )
    references = {r.variant_label for r in results if r.harness == REFERENCE_HARNESS}
    flaky = tuple(
        FlakyRow(task=f.task, variant=f.arm, passes=f.passes, trials=f.trials, reason=f.reason)
        for f in flaky_tasks(arms, references)
    )
    return Statistics(
        min_tasks=min_tasks,
        seed=seed,
        resamples=resamples,
        best=best,
        arms=tuple(rows),
        versus_best=tuple(versus),
        flaky=flaky,
        frontier=tuple(frontier),
    )


def compare_many(
    pairs: Sequence[tuple[str, str]],
    arms: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    min_tasks: int = MIN_PAIRED_TASKS,
    confidence: float = CONFIDENCE,
) -> list[Comparison]:
    """Each (first, second) pair compared; with several, each interval is at the Bonferroni
    level (1 - alpha / pairs) and each p-value Holm-adjusted, so the verdicts hold together."""
    if not pairs:
        return []
    level = 1 - (1 - confidence) / len(pairs)
    found = [
        compare_paired(
            arms[first],
            arms[second],
            min_tasks=min_tasks,
            confidence=level,
            resamples=resamples,
            seed=seed,
        )
        for first, second in pairs
    ]
    adjusted = holm([c.p_value for c in found])
    return [
        comparison_row(first, second, c, p).model_copy(
            update={"seed": seed, "resamples": resamples}
        )
        for (first, second), c, p in zip(pairs, found, adjusted, strict=True)
    ]


def comparison_row(first: str, second: str, found: PairedComparison, adjusted: float) -> Comparison:
    return Comparison(
        first=first,
        second=second,
        tasks=tuple(
            PairedTaskRow(
                task=t.task,
                first=round(t.first, 6),
                second=round(t.second, 6),
                first_trials=t.first_trials,
                second_trials=t.second_trials,
                difference=round(t.difference, 6),
            )
            for t in found.tasks
        ),
        first_mean=_round(found.first_mean),
        second_mean=_round(found.second_mean),
        difference=_round(found.difference),
        interval=Bounds.of(found.interval),
        confidence=round(found.confidence, 6),
        wins=found.wins,
        losses=found.losses,
        ties=found.ties,
        p_value=round(found.p_value, 6),
        p_adjusted=round(adjusted, 6),
        test=found.test,
        verdict=found.verdict,
        min_tasks=found.min_tasks,
        unpaired=found.unpaired,
        tasks_needed=found.tasks_needed,
    )


def _arm(
    variant: str,
    outcomes: Mapping[str, Sequence[float]],
    results: Sequence[TrialResult],
    seed: int,
    resamples: int,
) -> ArmStats:
    per_task = [pystats.fmean(v) for v in outcomes.values() if v]
    repeats = min((len(v) for v in outcomes.values() if v), default=0)
    at_k: dict[str, float] = {}
    hat_k: dict[str, float] = {}
    if repeats >= 2:
        for k in range(1, repeats + 1):
            at_k[str(k)] = _mean_over(outcomes, pass_at_k, k)
            hat_k[str(k)] = _mean_over(outcomes, pass_hat_k, k)
    costs = [r.cost.charged_usd for r in results]
    cost_bound = mean_interval(costs)
    cost = pystats.fmean(costs) if costs else None
    logs: dict[str, list[float]] = {}
    for result in results:
        if LOG_RATIO in result.metrics:
            logs.setdefault(result.task, []).append(result.metrics[LOG_RATIO])
    ratio = geometric_ratio(logs, seed=seed, resamples=resamples)
    return ArmStats(
        variant=variant,
        tasks=len(per_task),
        trials=sum(len(v) for v in outcomes.values()),
        pass_rate=_round(pystats.fmean(per_task)) if per_task else None,
        interval=Bounds.of(wilson(sum(per_task), len(per_task), CONFIDENCE)) if per_task else None,
        pass_at_k=at_k,
        pass_hat_k=hat_k,
        cost_per_trial=_round(cost),
        cost_high=_round(cost_bound.high if cost_bound else cost),
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
