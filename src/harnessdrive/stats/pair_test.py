"""The test and the interval of one paired comparison, chosen by how the trials were run.

One pass/fail trial per task and arm: exact McNemar on the tasks that differ, and Tango's score
interval of the paired difference. Otherwise (repeats, unequal repeats, or scores): each task's
repeats are averaged, and the per-task differences get the sign-flip permutation test and a t
interval; when every task differs by the same amount the t interval has no width, so Wilson's
score interval of the rescaled mean difference, counting tasks, stands in for it."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from harnessdrive.stats.binomial import mcnemar
from harnessdrive.stats.intervals import Interval, wilson_rate
from harnessdrive.stats.paired import PairedTask
from harnessdrive.stats.signflip import DRAWS, sign_flip_test
from harnessdrive.stats.student import t_quantile
from harnessdrive.stats.tango import tango_interval

Design = Literal["one trial", "repeats"]
Outcomes = Mapping[str, Sequence[float]]


@dataclass(frozen=True)
class PairTest:
    design: Design
    test: str
    """The test in words, with how its p-value was computed."""
    p_value: float
    p_error: float
    """The Monte Carlo standard error of ``p_value``; 0 when exact."""
    differing: int
    """Tasks whose difference is not 0 (for McNemar: the discordant tasks)."""
    unequal_repeats: bool


def paired_tasks(first: Outcomes, second: Outcomes) -> tuple[PairedTask, ...]:
    """The tasks both arms have outcomes for, each arm's repeats averaged, in ``first``'s order."""
    return tuple(
        PairedTask(
            task=task,
            first=statistics.fmean(first[task]),
            second=statistics.fmean(second[task]),
            first_trials=len(first[task]),
            second_trials=len(second[task]),
        )
        for task in first
        if first[task] and second.get(task)
    )


def design_of(tasks: Sequence[PairedTask]) -> Design:
    single = all(
        t.first_trials == t.second_trials == 1 and {t.first, t.second} <= {0.0, 1.0} for t in tasks
    )
    return "one trial" if single else "repeats"


def pair_test(tasks: Sequence[PairedTask], *, seed: int = 0, draws: int = DRAWS) -> PairTest:
    design = design_of(tasks)
    unequal = len({(t.first_trials, t.second_trials) for t in tasks}) > 1 or any(
        t.first_trials != t.second_trials for t in tasks
    )
    if design == "one trial":
        only_first = sum(t.first > t.second for t in tasks)
        only_second = sum(t.first < t.second for t in tasks)
        return PairTest(
            design,
            "exact McNemar",
            mcnemar(only_first, only_second),
            0.0,
            only_first + only_second,
            False,
        )
    found = sign_flip_test([t.difference for t in tasks], seed=seed, draws=draws)
    if found.method == "exact":
        how = f"exact over all {found.arrangements:,} arrangements"
    else:
        how = f"Monte Carlo, {found.arrangements:,} draws, standard error {found.error:.2g}"
    return PairTest(
        design,
        f"sign-flip permutation test on per-task means ({how})",
        found.p_value,
        found.error,
        sum(abs(t.difference) > 1e-12 for t in tasks),
        unequal,
    )


def pair_interval(tasks: Sequence[PairedTask], confidence: float) -> tuple[Interval | None, str]:
    """The interval of the mean per-task difference and the name of its method; None for
    fewer than two tasks (one task has no spread to say anything with)."""
    if len(tasks) < 2:
        return None, "none: one task has no spread"
    if design_of(tasks) == "one trial":
        only_first = sum(t.first > t.second for t in tasks)
        only_second = sum(t.first < t.second for t in tasks)
        return tango_interval(only_first, only_second, len(tasks), confidence), "Tango's score"
    differences = [t.difference for t in tasks]
    count = len(differences)
    mean = statistics.fmean(differences)
    spread = statistics.stdev(differences)
    if spread <= 1e-12:
        # Rescale [-1, 1] to [0, 1]; Wilson's interval there is never zero-width.
        bounds = wilson_rate((mean + 1) / 2, count, confidence)
        return (
            Interval(2 * bounds.low - 1, 2 * bounds.high - 1),
            "Wilson's score on the difference (every task differs by the same amount)",
        )
    half = t_quantile(0.5 + confidence / 2, count - 1) * spread / math.sqrt(count)
    return Interval(max(-1.0, mean - half), min(1.0, mean + half)), "t over tasks"


def fewest_tasks_for(alpha: float) -> int:
    """The fewest tasks that differ with which an exact two-sided test (McNemar or the
    sign-flip test, whose smallest p is 2 / 2^n) can reach p < ``alpha``."""
    n = 1
    while 2.0 ** (1 - n) >= alpha:
        n += 1
    return n
