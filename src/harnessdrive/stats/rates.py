"""An arm's pass rate and its interval with tasks as the unit and repeats nested in tasks.

The rate is the mean of the per-task rates, so a task run five times weighs as much as a task
run once. The interval is Wilson's, at an effective number of trials: the per-task rates'
observed spread says how much the mean can move (between-task spread plus what is left of the
repeats' own spread after averaging), and Wilson's interval is taken at the count of trials
that would give that spread. With one trial per task that count is the number of tasks, so the
interval is Wilson's over tasks; repeats that agree with each other shrink the spread and so
narrow the interval, never below what every trial counted independently would give. The spread
is estimated from the tasks, so the count is scaled by (z / t)^2, t the quantile of Student's t
on tasks - 1 degrees of freedom: the small-sample price of estimating it (without it a 95%
interval covered 92% at 10 tasks in benchmarks/statistics.py)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harnessdrive.stats.intervals import Interval, wilson_rate, z_value
from harnessdrive.stats.student import t_quantile


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
    effective = effective_trials(per_task, trials, confidence)
    return ArmRate(
        rate=rate,
        interval=wilson_rate(rate, effective, confidence),
        tasks=tasks,
        trials=trials,
        effective_trials=effective,
    )


def effective_trials(per_task: Sequence[float], trials: int, confidence: float = 0.95) -> float:
    """p(1-p) over the variance of the mean of ``per_task``, scaled by (z / t)^2 and kept
    between the number of tasks and the number of trials; the trials when every task has the
    same rate, the tasks when each ran once."""
    tasks = len(per_task)
    if tasks < 2:
        return float(trials)
    if trials <= tasks:
        return float(tasks)
    rate = statistics.fmean(per_task)
    variance_of_mean = statistics.variance(per_task) / tasks
    if variance_of_mean <= 0:
        return float(trials)
    scale = (z_value(confidence) / t_quantile(0.5 + confidence / 2, tasks - 1)) ** 2
    return min(float(trials), max(float(tasks), scale * rate * (1 - rate) / variance_of_mean))
