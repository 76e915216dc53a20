"""The report's statistics: the comparison model of stats/decisions.py over the finished trials
on the compared tasks, plus pass@k, flaky tasks, the Pareto frontier, improvement ratios and
per-rule rates (docs/report.md). Every view (text, markdown, JSON, HTML, ``compare``, the
pytest plugin's session report) reads these and nothing else, so they cannot disagree."""

from __future__ import annotations

import statistics as pystats
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from harnessdrive.report.arm_inputs import arm_inputs
from harnessdrive.report.flaky import flaky_rows
from harnessdrive.stats import Interval, ParetoPoint, pareto_frontier, pass_at_k, pass_hat_k
from harnessdrive.stats.answer import answer, settles
from harnessdrive.stats.decisions import MIN_TASKS, ArmSummary, Decisions, PairDecision, decide
from harnessdrive.stats.improvement import geometric_ratio, rule_rates
from harnessdrive.stats.secondary import paired_mean_difference
from harnessdrive.store.results import TrialResult

CONFIDENCE = 0.95
DEFAULT_SEED = 0
LOG_RATIO = "improve.log_ratio"
"""The metric an improvement trial records its natural-log improvement ratio under."""
IMPROVEMENT_MARK = "improve.baseline"
"""Every improvement trial records its baseline, gate passed or not."""


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
    """The two-level interval of that rate: Wilson's at the effective number of trials."""
    rank: int = 0
    """1 for the highest rate; equal rates share a rank."""
    tied: bool = False
    baseline: bool = False
    """A calibration arm (a built-in scripted agent, or a variant with ``baseline = true``)."""
    effective_trials: float | None = None
    """What the interval counts: the tasks with one trial each, up to every trial when repeats
    agree with each other."""
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    """k to the unbiased pass@k, for k up to the fewest repeats of a task (when 2 or more)."""
    pass_hat_k: dict[str, float] = Field(default_factory=dict)
    cost_per_trial: float | None = None
    """The mean over tasks of each task's mean cost per trial (the cost of a task)."""
    cost_interval: Bounds | None = None
    """Student's t interval of that cost over tasks; None below 2 tasks or without spread."""
    cost_high: float | None = None
    """The upper end of ``cost_interval`` (the cost itself when there is none)."""
    cost_per_pass: float | None = None
    cost_per_pass_interval: Bounds | None = None
    """A percentile bootstrap over tasks; None when a resample could pass nothing."""
    on_frontier: bool = False
    accepted_rate: float | None = None
    """The pass rate counting only passes a person accepted (mean over tasks); None when no
    pass on the compared tasks was reviewed."""
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


class MeasureDifference(_Model):
    measure: str
    """``improvement`` (the natural-log improvement ratio) or ``rule <name>`` (a rule's pass
    rate)."""
    difference: float
    interval: Bounds | None
    p_value: float
    tasks: int


class Comparison(_Model):
    first: str
    second: str
    tasks: tuple[PairedTaskRow, ...]
    first_mean: float | None
    second_mean: float | None
    difference: float | None
    """Mean over paired tasks of first - second."""
    interval: Bounds | None
    confidence: float
    """The interval's level: 1 minus this comparison's Holm step level."""
    interval_method: str
    test: str
    p_value: float
    p_error: float = 0.0
    """The Monte Carlo standard error of ``p_value``; 0 when exact."""
    p_adjusted: float
    """Holm-adjusted over the comparisons of the view."""
    threshold: float
    """The level this comparison's Holm step needs ``p_value`` below."""
    verdict: str
    """``better`` / ``worse`` (first against second), ``equivalent``, or ``inconclusive``."""
    reason: str | None = None
    """Which condition failed, for an inconclusive verdict."""
    settle: str | None = None
    """What would likely settle an inconclusive comparison, simulated from this run."""
    more_tasks: int | None = None
    more_repeats: int | None = None
    p_better: float
    """P(first's mean per-task rate is above second's), a Bayesian bootstrap over tasks."""
    wins: int
    losses: int
    ties: int
    differing: int
    unequal_repeats: bool
    family: int
    """How many comparisons the Holm correction ran over."""
    cost_difference: float | None = None
    """Mean over paired tasks of first's cost per trial minus second's."""
    cost_interval: Bounds | None = None
    seed: int = DEFAULT_SEED
    measures: tuple[MeasureDifference, ...] = ()
    """Paired differences of the log improvement ratio and of each rule's pass rate, with
    intervals over tasks at the comparison's level; they describe, the verdict stays the pass
    rate's."""
    provenance: tuple[ProvenanceRow, ...] = ()
    """Where the two arms' trials differ beyond what their variants say (``compare`` only)."""

    def flipped(self) -> Comparison:
        """The same comparison read from the second arm's side."""
        swap = {"better": "worse", "worse": "better"}
        return self.model_copy(
            update={
                "first": self.second,
                "second": self.first,
                "tasks": tuple(
                    PairedTaskRow(
                        task=t.task,
                        first=t.second,
                        second=t.first,
                        first_trials=t.second_trials,
                        second_trials=t.first_trials,
                        difference=-t.difference,
                    )
                    for t in self.tasks
                ),
                "first_mean": self.second_mean,
                "second_mean": self.first_mean,
                "difference": None if self.difference is None else -self.difference,
                "interval": None
                if self.interval is None
                else Bounds(low=-self.interval.high, high=-self.interval.low),
                "verdict": swap.get(self.verdict, self.verdict),
                "p_better": round(1 - self.p_better, 6),
                "wins": self.losses,
                "losses": self.wins,
                "cost_difference": None if self.cost_difference is None else -self.cost_difference,
                "cost_interval": None
                if self.cost_interval is None
                else Bounds(low=-self.cost_interval.high, high=-self.cost_interval.low),
                "measures": tuple(
                    m.model_copy(
                        update={
                            "difference": -m.difference,
                            "interval": None
                            if m.interval is None
                            else Bounds(low=-m.interval.high, high=-m.interval.low),
                        }
                    )
                    for m in self.measures
                ),
            }
        )


class FlakyRow(_Model):
    task: str
    variant: str
    passes: float
    trials: int
    reason: str
    """``grading is nondeterministic`` (the same change graded twice apart, or a reference that
    does not always pass) or ``agent's spread across repeats``."""


class Statistics(_Model):
    confidence: float = CONFIDENCE
    margin: float | None = None
    """The equivalence margin, when one was given."""
    min_tasks: int = MIN_TASKS
    seed: int = DEFAULT_SEED
    accepted_only: bool = False
    """Only passes a person accepted count as passes."""
    answer: str = ""
    """The answer in words (the first line of every view)."""
    best: str | None = None
    tied: tuple[str, ...] = ()
    compared: tuple[str, ...] = ()
    """The arms the comparisons are among: the non-baseline ones (all when every arm is one)."""
    family: int = 0
    fewest_tasks: int = 0
    """The fewest tasks that differ with which any verdict of this family is possible."""
    arms: tuple[ArmStats, ...] = ()
    comparisons: tuple[Comparison, ...] = ()
    """Every pair of compared arms, the higher-ranked first."""
    flaky: tuple[FlakyRow, ...] = ()
    frontier: tuple[str, ...] = ()
    """Arms on the Pareto frontier of pass rate against cost per task, at their estimates,
    cheapest first."""

    def row_fields(self, variant: str) -> dict[str, object]:
        """What the scoreboard row of ``variant`` shows of these statistics."""
        arm = next((a for a in self.arms if a.variant == variant), None)
        return {
            "interval": arm.interval if arm else None,
            "pass_rate": arm.pass_rate if arm else None,
            "rank": arm.rank if arm else 0,
            "versus_best": self.standing(variant),
        }

    def standing(self, variant: str) -> str | None:
        """``best``, ``tied``, ``baseline``, or this arm's verdict against the best."""
        arm = next((a for a in self.arms if a.variant == variant), None)
        if arm is None:
            return None
        if variant == self.best:
            return "best"
        if variant in self.tied:
            return "tied"
        if variant not in self.compared:
            return "baseline"
        anchor = self.best or (self.tied[0] if self.tied else None)
        found = self.between(variant, anchor) if anchor else None
        return found.verdict if found else None

    def between(self, first: str, second: str) -> Comparison | None:
        """``first`` against ``second``, read from ``first``'s side."""
        for c in self.comparisons:
            if (c.first, c.second) == (first, second):
                return c
            if (c.first, c.second) == (second, first):
                return c.flipped()
        return None


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
    outcomes = {arm.name: arm.outcomes for arm in inputs}
    rows = [
        _arm(summary, outcomes[summary.name], by_arm[summary.name], seed)
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
                update={"measures": measures(by_arm[c.first], by_arm[c.second], c.level, seed)}
            )
            for c in decided.comparisons
        ),
        flaky=tuple(
            FlakyRow(
                task=f.task, variant=f.variant, passes=f.passes, trials=f.trials, reason=f.reason
            )
            for f in flaky_rows(results, outcomes, inputs)
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
    ratio = geometric_ratio(improvement_logs(results), seed=seed)
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


def measures(
    first: Sequence[TrialResult], second: Sequence[TrialResult], level: float, seed: int
) -> tuple[MeasureDifference, ...]:
    """The improvement ratio and each rule's pass rate of ``first`` against ``second``."""
    pairs = [("improvement", improvement_logs(first), improvement_logs(second))]
    first_rules, second_rules = rule_scores(first), rule_scores(second)
    pairs += [
        (f"rule {rule}", first_rules[rule], second_rules[rule])
        for rule in sorted(first_rules)
        if rule in second_rules
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
