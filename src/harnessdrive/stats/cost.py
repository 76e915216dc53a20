"""Cost with tasks as the unit: an arm's cost per task, its cost per pass, and the paired
per-task cost difference of two arms, each with an interval over tasks.

A cost interval is None below two tasks or when every task cost the same (no spread to
measure): a zero-width interval would claim a certainty the tasks cannot give."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harnessdrive.stats.bootstrap import _quantile
from harnessdrive.stats.intervals import Interval
from harnessdrive.stats.pair_test import paired_tasks
from harnessdrive.stats.student import t_quantile

RESAMPLES = 2000


@dataclass(frozen=True)
class CostSummary:
    per_task: float
    """The mean over tasks of each task's mean cost per trial."""
    interval: Interval | None
    per_pass: float | None
    """Cost per task over the pass rate: what one pass costs; None without a pass."""
    per_pass_interval: Interval | None
    """A percentile bootstrap over tasks of the ratio; None when a resample can pass nothing
    (the ratio is unbounded) or below two tasks."""
    tasks: int


def mean_interval_t(values: Sequence[float], confidence: float) -> Interval | None:
    """Student's t interval of the mean of ``values``; None below two or without spread."""
    if len(values) < 2:
        return None
    spread = statistics.stdev(values)
    if spread <= 1e-12:
        return None
    half = t_quantile(0.5 + confidence / 2, len(values) - 1) * spread / math.sqrt(len(values))
    mean = statistics.fmean(values)
    return Interval(mean - half, mean + half)


def cost_summary(
    costs: Mapping[str, Sequence[float]],
    outcomes: Mapping[str, Sequence[float]],
    confidence: float,
    *,
    seed: int = 0,
) -> CostSummary | None:
    tasks = [t for t in outcomes if outcomes[t] and costs.get(t)]
    if not tasks:
        return None
    cost = [statistics.fmean(costs[t]) for t in tasks]
    rate = [statistics.fmean(outcomes[t]) for t in tasks]
    per_task = statistics.fmean(cost)
    mean_rate = statistics.fmean(rate)
    return CostSummary(
        per_task=per_task,
        interval=mean_interval_t(cost, confidence),
        per_pass=per_task / mean_rate if mean_rate > 0 else None,
        per_pass_interval=_ratio_interval(cost, rate, confidence, seed),
        tasks=len(tasks),
    )


def _ratio_interval(
    cost: Sequence[float], rate: Sequence[float], confidence: float, seed: int
) -> Interval | None:
    if len(cost) < 2 or statistics.fmean(rate) <= 0:
        return None
    rng = random.Random(seed)
    indices = range(len(cost))
    ratios = []
    for _ in range(RESAMPLES):
        drawn = rng.choices(indices, k=len(cost))
        passes = sum(rate[i] for i in drawn)
        if passes <= 0:
            return None
        ratios.append(sum(cost[i] for i in drawn) / passes)
    ratios.sort()
    tail = (1 - confidence) / 2
    low, high = _quantile(ratios, tail), _quantile(ratios, 1 - tail)
    return Interval(low, high) if high - low > 1e-12 else None


def cost_difference(
    first: Mapping[str, Sequence[float]],
    second: Mapping[str, Sequence[float]],
    confidence: float,
) -> tuple[float, Interval | None] | None:
    """Mean over the tasks both have costs for of first's mean cost minus second's."""
    differences = [task.difference for task in paired_tasks(first, second)]
    if not differences:
        return None
    return statistics.fmean(differences), mean_interval_t(differences, confidence)
