"""Paired comparisons of measures other than the pass rate: an improvement task's log ratio,
a differential grader's per-rule pass rate. Each task's trials are averaged, and the per-task
differences get the sign-flip permutation test and a t interval over tasks, as the pass rate
with repeats does. They describe; the verdict of a comparison stays the pass rate's."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harnessdrive.stats.cost import mean_interval_t
from harnessdrive.stats.intervals import Interval
from harnessdrive.stats.pair_test import paired_tasks
from harnessdrive.stats.signflip import sign_flip_test


@dataclass(frozen=True)
class MeanDifference:
    difference: float
    """Mean over paired tasks of first's mean minus second's."""
    interval: Interval | None
    """Student's t over tasks; None below two tasks or without spread."""
    p_value: float
    tasks: int


def paired_mean_difference(
    first: Mapping[str, Sequence[float]],
    second: Mapping[str, Sequence[float]],
    confidence: float,
    *,
    seed: int = 0,
) -> MeanDifference | None:
    differences = [task.difference for task in paired_tasks(first, second)]
    if not differences:
        return None
    return MeanDifference(
        difference=statistics.fmean(differences),
        interval=mean_interval_t(differences, confidence),
        p_value=sign_flip_test(differences, seed=seed).p_value,
        tasks=len(differences),
    )
