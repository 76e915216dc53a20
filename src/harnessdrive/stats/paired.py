"""Two arms compared task by task, on the tasks both ran.

Each task's repeats are averaged first, so a task run five times weighs as much as a task run
once; the interval of the mean difference comes from a cluster bootstrap over tasks and the
p-value from an exact test on the tasks that went one way or the other. The verdict is
``better`` or ``worse`` only when at least ``min_tasks`` tasks are paired, the interval excludes
0 *and* the exact test agrees (p below 1 - confidence); below ``min_tasks`` it is ``not enough
tasks`` whatever the numbers say. The test must agree because a bootstrap over a handful of tasks
that all went the same way has no spread: five wins out of five give an interval of [1, 1], yet
a sign-test p of 0.0625.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from harnessdrive.stats.binomial import sign_test
from harnessdrive.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, cluster_bootstrap
from harnessdrive.stats.intervals import Interval
from harnessdrive.stats.power import tasks_needed

MIN_PAIRED_TASKS = 5
"""Fewer paired tasks than this never give a verdict: with four tasks even a clean sweep has a
sign-test p of 0.125."""

Verdict = Literal["better", "worse", "no evidence", "not enough tasks"]
Outcomes = Mapping[str, Sequence[float]]
"""Task id to the outcomes of its repeats (1.0 pass, 0.0 fail, or a score in [0, 1])."""


@dataclass(frozen=True)
class PairedTask:
    task: str
    first: float
    """The first arm's mean over its repeats of this task."""
    second: float
    first_trials: int
    second_trials: int

    @property
    def difference(self) -> float:
        return self.first - self.second


@dataclass(frozen=True)
class PairedComparison:
    tasks: tuple[PairedTask, ...]
    first_mean: float | None
    second_mean: float | None
    difference: float | None
    """Mean over paired tasks of (first - second); None when no task is paired."""
    interval: Interval | None
    """None below two paired tasks: one task has no spread, so no honest interval."""
    wins: int
    """Paired tasks where the first arm did better."""
    losses: int
    ties: int
    p_value: float
    test: str
    verdict: Verdict
    unpaired: int
    """Tasks only one arm has outcomes for; left out."""
    confidence: float
    min_tasks: int
    tasks_needed: int | None
    """Paired tasks a new comparison would need to detect the observed difference (80% power,
    two-sided 5%), from the spread seen here; None when it cannot be said."""


def compare_paired(
    first: Outcomes,
    second: Outcomes,
    *,
    min_tasks: int = MIN_PAIRED_TASKS,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedComparison:
    """``first`` against ``second`` on the tasks both have outcomes for."""
    shared = [t for t in first if first[t] and t in second and second[t]]
    unpaired = len({t for t in first if first[t]} ^ {t for t in second if second[t]})
    tasks = tuple(
        PairedTask(
            task=t,
            first=statistics.fmean(first[t]),
            second=statistics.fmean(second[t]),
            first_trials=len(first[t]),
            second_trials=len(second[t]),
        )
        for t in shared
    )
    differences = [task.difference for task in tasks]
    wins = sum(d > 0 for d in differences)
    losses = sum(d < 0 for d in differences)
    p_value = sign_test(wins, losses)
    interval = cluster_bootstrap(differences, confidence=confidence, resamples=resamples, seed=seed)
    difference = statistics.fmean(differences) if differences else None
    return PairedComparison(
        tasks=tasks,
        first_mean=statistics.fmean(t.first for t in tasks) if tasks else None,
        second_mean=statistics.fmean(t.second for t in tasks) if tasks else None,
        difference=difference,
        interval=interval,
        wins=wins,
        losses=losses,
        ties=len(tasks) - wins - losses,
        p_value=p_value,
        test=_test_name(tasks, first, second),
        verdict=decide(
            len(tasks), difference, interval, min_tasks, p_value=p_value, alpha=1 - confidence
        ),
        unpaired=unpaired,
        confidence=confidence,
        min_tasks=min_tasks,
        tasks_needed=_needed(differences),
    )


def decide(
    paired: int,
    difference: float | None,
    interval: Interval | None,
    min_tasks: int,
    *,
    p_value: float,
    alpha: float,
) -> Verdict:
    if paired < max(min_tasks, 2) or difference is None or interval is None:
        return "not enough tasks"
    if not interval.excludes(0.0) or p_value >= alpha:
        return "no evidence"
    return "better" if difference > 0 else "worse"


def _test_name(tasks: Sequence[PairedTask], first: Outcomes, second: Outcomes) -> str:
    # One pass/fail trial per task and arm: the sign test on discordant tasks is McNemar's.
    binary = all(
        len(first[t.task]) == len(second[t.task]) == 1
        and {*first[t.task], *second[t.task]} <= {0.0, 1.0}
        for t in tasks
    )
    return "McNemar (exact)" if binary else "sign test (exact)"


def _needed(differences: Sequence[float]) -> int | None:
    if len(differences) < 2:
        return None
    mean = statistics.fmean(differences)
    spread = statistics.stdev(differences)
    if mean == 0 or spread == 0:
        return None
    return tasks_needed(abs(mean), spread)
