"""An arm's pass rate and its interval with tasks as the unit and repeats nested in tasks.

The rate is the mean of the per-task rates, so a task run five times weighs as much as a task
run once. The interval is Wilson's, at an effective number of trials: the per-task rates'
observed spread says how much the mean can move (between-task spread plus what is left of the
repeats' own spread after averaging), and Wilson's interval is taken at the count of trials
that would give that spread. With one trial per task that count is the number of tasks, so the
interval is Wilson's over tasks; repeats that agree with each other shrink the spread and so
narrow the interval, never below what every trial counted independently would give."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harnessdrive.stats.intervals import Interval, wilson_rate


@dataclass(frozen=True)
class ArmRate:
    rate: float
    interval: Interval
    tasks: int
    trials: int
    effective_trials: float
    """The count of independent trials the interval is worth (between tasks and trials)."""


def arm_rate(outcomes: Mapping[str, Sequence[float]], confidence: float = 0.95) -> ArmRate | None:
    """The rate of an arm from task id to its repeats' outcomes in [0, 1]; None without any."""
    per_task = [statistics.fmean(values) for values in outcomes.values() if values]
    if not per_task:
        return None
    tasks = len(per_task)
    trials = sum(len(values) for values in outcomes.values())
    rate = statistics.fmean(per_task)
    effective = effective_trials(per_task, trials)
    return ArmRate(
        rate=rate,
        interval=wilson_rate(rate, effective, confidence),
        tasks=tasks,
        trials=trials,
        effective_trials=effective,
    )


def effective_trials(per_task: Sequence[float], trials: int) -> float:
    """p(1-p) over the variance of the mean of ``per_task``, kept between the number of tasks
    and the number of trials; the trials when every task has the same rate."""
    tasks = len(per_task)
    if tasks < 2:
        return float(trials)
    rate = statistics.fmean(per_task)
    variance_of_mean = statistics.variance(per_task) / tasks
    if variance_of_mean <= 0:
        return float(trials)
    return min(float(trials), max(float(tasks), rate * (1 - rate) / variance_of_mean))
