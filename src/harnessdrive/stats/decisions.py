"""One model of a comparison, which every view of a result set shows: ``decide(arms)``.

Tasks are the unit and repeats are nested in tasks. An arm's rate is the mean of its per-task
rates, with the two-level interval of ``stats/rates.py``; arms are ranked by that rate, and equal
rates share a rank. Baseline arms (built-in scripted agents, variants marked ``baseline``) are
calibration lines: ranked and shown, never "best", and left out of the comparisons unless no
other arm ran. Every pair of the other arms is compared paired by task (``stats/pair_test.py``),
and Holm's step-down runs over those comparisons: the comparison with the r-th smallest p (from
0) is tested at alpha / (m - r), and its interval is taken at that same level, so the p-value, the
interval and the verdict printed together always agree.

A verdict is ``better`` or ``worse`` when the Holm-adjusted p is below alpha *and* the interval
at the comparison's level lies wholly on one side of 0; ``equivalent`` when a margin is given
and that interval lies within +-margin (each one-sided test then passes at half the level, so
the equivalence claim is conservative); otherwise ``inconclusive``, with the condition that
failed and, from a simulation of this run's own tasks, what would likely settle it."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Literal

from harnessdrive.stats.bayes import probability_better
from harnessdrive.stats.cost import CostSummary, cost_difference, cost_summary
from harnessdrive.stats.intervals import Interval
from harnessdrive.stats.multiple import holm
from harnessdrive.stats.pair_test import (
    Design,
    fewest_tasks_for,
    pair_interval,
    pair_test,
    paired_tasks,
)
from harnessdrive.stats.paired import PairedTask
from harnessdrive.stats.rates import arm_rate
from harnessdrive.stats.settle import Settle, what_settles

Verdict = Literal["better", "worse", "equivalent", "inconclusive"]
VERDICTS: tuple[Verdict, ...] = ("better", "worse", "equivalent", "inconclusive")
MIN_TASKS = 2
"""Paired tasks below which no interval, and so no verdict, is possible."""


@dataclass(frozen=True)
class ArmInput:
    name: str
    outcomes: Mapping[str, Sequence[float]]
    """Task id to the outcomes of its repeats: 1.0 a pass, 0.0 not, or a score in [0, 1]."""
    costs: Mapping[str, Sequence[float]] = field(default_factory=dict)
    """Task id to the cost of each of its trials, in dollars (empty when unknown)."""
    baseline: bool = False


@dataclass(frozen=True)
class ArmSummary:
    name: str
    baseline: bool
    rank: int
    """1 for the highest rate; arms with equal rates share a rank (1, 1, 3)."""
    tied: bool
    rate: float
    interval: Interval
    tasks: int
    trials: int
    effective_trials: float
    cost: CostSummary | None


@dataclass(frozen=True)
class PairDecision:
    first: str
    """The higher-ranked arm of the two (the best arm when it is one of them)."""
    second: str
    tasks: tuple[PairedTask, ...]
    design: Design
    difference: float | None
    """Mean over paired tasks of first - second."""
    interval: Interval | None
    level: float
    """The interval's confidence: 1 minus this comparison's Holm step level."""
    interval_method: str
    test: str
    p_value: float
    p_error: float
    p_adjusted: float
    threshold: float
    """The level this comparison's Holm step tests its p at."""
    verdict: Verdict
    reason: str | None
    """Which condition failed, for an inconclusive verdict."""
    settle: Settle | None
    p_better: float
    """P(first's mean per-task rate is above second's), a Bayesian bootstrap over tasks."""
    differing: int
    unequal_repeats: bool
    cost_difference: float | None = None
    cost_interval: Interval | None = None


@dataclass(frozen=True)
class Decisions:
    confidence: float
    margin: float | None
    arms: tuple[ArmSummary, ...]
    """Ranked, highest rate first."""
    comparisons: tuple[PairDecision, ...]
    best: str | None
    """The one non-baseline arm with the highest rate; None on a tie or without such arms."""
    tied: tuple[str, ...]
    """The non-baseline arms sharing the highest rate, when more than one does."""
    compared: tuple[str, ...]
    """The arms the comparisons are among: every non-baseline arm (every arm if all are)."""
    fewest_tasks: int
    """The fewest differing tasks any verdict of this family can come from."""
    seed: int

    @property
    def family(self) -> int:
        return len(self.comparisons)

    def arm(self, name: str) -> ArmSummary | None:
        return next((a for a in self.arms if a.name == name), None)

    def between(self, a: str, b: str) -> PairDecision | None:
        """The comparison of ``a`` and ``b``, in either order as it was made."""
        return next((c for c in self.comparisons if {c.first, c.second} == {a, b}), None)

    def against(self, anchor: str) -> list[PairDecision]:
        return [c for c in self.comparisons if anchor in (c.first, c.second)]


def decide(
    arms: Sequence[ArmInput],
    *,
    confidence: float = 0.95,
    margin: float | None = None,
    min_tasks: int = MIN_TASKS,
    seed: int = 0,
    settle: bool = True,
) -> Decisions:
    """Rank ``arms`` and compare every pair of the non-baseline ones, paired by task."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    if margin is not None and not 0 < margin < 1:
        raise ValueError(f"a margin lies strictly between 0 and 1, not {margin}")
    alpha = 1 - confidence
    summaries = _ranked(arms, confidence)
    by_name = {arm.name: arm for arm in arms}
    real = [s.name for s in summaries if not s.baseline]
    compared = real or [s.name for s in summaries]
    leading = min((s.rank for s in summaries if s.name in real), default=0)
    top = [s for s in summaries if s.name in real and s.rank == leading]
    pairs = list(combinations(compared, 2))
    tests = []
    for first, second in pairs:
        tasks = paired_tasks(by_name[first].outcomes, by_name[second].outcomes)
        tests.append((first, second, tasks, pair_test(tasks, seed=seed)))
    adjusted = holm([found.p_value for *_, found in tests])
    order = sorted(range(len(tests)), key=lambda i: (tests[i][3].p_value, i))
    step = {index: alpha / (len(tests) - position) for position, index in enumerate(order)}
    fewest = fewest_tasks_for(alpha / len(tests)) if tests else 0
    comparisons = []
    for index, (first, second, tasks, found) in enumerate(tests):
        threshold = step[index]
        interval, method = pair_interval(tasks, 1 - threshold)
        differences = [t.difference for t in tasks]
        difference = statistics.fmean(differences) if differences else None
        verdict, reason = _verdict(
            len(tasks),
            found.differing,
            difference,
            interval,
            found.p_value,
            adjusted[index],
            threshold,
            _Family(alpha, len(tests), fewest, min_tasks, margin, 1 - threshold),
        )
        saving = cost_difference(by_name[first].costs, by_name[second].costs, confidence)
        comparisons.append(
            PairDecision(
                first=first,
                second=second,
                tasks=tasks,
                design=found.design,
                difference=difference,
                interval=interval,
                level=1 - threshold,
                interval_method=method,
                test=found.test,
                p_value=found.p_value,
                p_error=found.p_error,
                p_adjusted=adjusted[index],
                threshold=threshold,
                verdict=verdict,
                reason=reason,
                settle=(
                    what_settles(tasks, threshold, margin, min_tasks, seed=seed)
                    if settle and verdict == "inconclusive"
                    else None
                ),
                p_better=probability_better(differences, seed=seed),
                differing=found.differing,
                unequal_repeats=found.unequal_repeats,
                cost_difference=saving[0] if saving else None,
                cost_interval=saving[1] if saving else None,
            )
        )
    return Decisions(
        confidence=confidence,
        margin=margin,
        arms=tuple(summaries),
        comparisons=tuple(comparisons),
        best=top[0].name if len(top) == 1 else None,
        tied=tuple(s.name for s in top) if len(top) > 1 else (),
        compared=tuple(compared),
        fewest_tasks=fewest,
        seed=seed,
    )


def _ranked(arms: Sequence[ArmInput], confidence: float) -> list[ArmSummary]:
    rated = []
    for arm in arms:
        found = arm_rate(arm.outcomes, confidence)
        if found is not None:
            rated.append((arm, found, cost_summary(arm.costs, arm.outcomes, confidence)))
    # Rates are compared rounded, so float noise in a mean never breaks a tie; tied arms are
    # listed cheapest first, and still share their rank.
    rated.sort(key=lambda entry: (-round(entry[1].rate, 9), entry[2].per_task if entry[2] else 0.0))
    summaries = []
    for arm, found, cost in rated:
        key = round(found.rate, 9)
        rank = 1 + sum(round(other.rate, 9) > key for _, other, _ in rated)
        tied = sum(round(other.rate, 9) == key for _, other, _ in rated) > 1
        summaries.append(
            ArmSummary(
                name=arm.name,
                baseline=arm.baseline,
                rank=rank,
                tied=tied,
                rate=found.rate,
                interval=found.interval,
                tasks=found.tasks,
                trials=found.trials,
                effective_trials=found.effective_trials,
                cost=cost,
            )
        )
    return summaries


@dataclass(frozen=True)
class _Family:
    alpha: float
    size: int
    fewest: int
    min_tasks: int
    margin: float | None
    level: float


def _verdict(
    paired: int,
    differing: int,
    difference: float | None,
    interval: Interval | None,
    p: float,
    p_adjusted: float,
    threshold: float,
    family: _Family,
) -> tuple[Verdict, str | None]:
    if paired < family.min_tasks or difference is None or interval is None:
        noun = "task" if paired == 1 else "tasks"
        return "inconclusive", f"{paired} {noun} in common; a verdict needs at least " + str(
            max(family.min_tasks, 2)
        )
    if (
        p_adjusted < family.alpha
        and (interval.low > 0 or interval.high < 0)
        and (difference > 0) == (interval.low > 0)
    ):
        return ("better" if difference > 0 else "worse"), None
    if (
        family.margin is not None
        and -family.margin < interval.low
        and interval.high < family.margin
    ):
        return "equivalent", None
    level = f"{family.level * 100:.3g}%"
    shown = f"[{interval.low * 100:+.0f}, {interval.high * 100:+.0f}] points"
    if differing < family.fewest:
        # "6 tasks; with 3 comparisons a verdict needs at least 7" (ties do not count).
        ties = differing != paired
        count = f"{differing} of {paired} tasks differ" if ties else f"{paired} tasks"
        family_size = f"with {family.size} comparisons " if family.size > 1 else ""
        reason = f"{count}; {family_size}a verdict needs at least {family.fewest}" + (
            " that differ" if ties else ""
        )
    elif p_adjusted >= family.alpha and p >= threshold:
        reason = f"p = {p:.2g}, needs < {threshold:.3g}"
    elif p_adjusted >= family.alpha:
        reason = (
            f"p = {p:.2g} is below its Holm step's {threshold:.3g}, but a smaller p before it "
            f"was not (Holm p = {p_adjusted:.2g})"
        )
    else:
        reason = f"p = {p:.2g} passes, but the {level} interval {shown} includes 0"
    if family.margin is not None:
        reason += f"; the interval {shown} is not within ±{family.margin * 100:.0f} points"
    return "inconclusive", reason
