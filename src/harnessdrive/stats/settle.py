"""What would likely settle an inconclusive comparison: more tasks, or more repeats of the same
tasks, found by simulating the comparison's own rule on runs drawn from this run's data.

More tasks: a new run draws its tasks, with their paired outcomes, from the tasks seen here.
More repeats: each task's repeats are drawn from its observed pass rate in each arm. Either way
the rule is the one in force (the same test, interval and Holm step level, the same margin), and
the answer is the smallest amount with which it decides in at least ``POWER`` of the simulated
runs. It is an estimate from this run, no better than the tasks it was drawn from."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harnessdrive.stats.pair_test import design_of, pair_interval, pair_test
from harnessdrive.stats.paired import PairedTask

POWER = 0.8
SIMULATIONS = 100
_TASK_STEPS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150, 200)
_REPEATS = (2, 3, 4, 5, 6, 8, 10, 15, 20)
_SIM_DRAWS = 1000
NORMAL_FROM = 30
"""Differing tasks from which a simulated run's sign-flip p is its normal approximation."""


@dataclass(frozen=True)
class Settle:
    more_tasks: int | None
    """Tasks to add; None when even ``most_tasks`` more would likely not settle it."""
    most_tasks: int
    repeats: int | None
    """Repeats of every task (of both arms) that would likely settle it; None when up to
    ``most_repeats`` would not, or outcomes are not pass/fail."""
    most_repeats: int
    power: float = POWER


def what_settles(
    tasks: Sequence[PairedTask],
    threshold: float,
    margin: float | None,
    min_tasks: int,
    *,
    seed: int = 0,
    simulations: int = SIMULATIONS,
) -> Settle:
    count = len(tasks)
    steps = [k for k in _TASK_STEPS if k <= max(10 * count, 20)]
    more = None
    if tasks:
        more = _smallest(
            steps,
            lambda k: _reaches(
                lambda rng: [rng.choice(tasks) for _ in range(count + k)],
                threshold,
                margin,
                min_tasks,
                seed,
                simulations,
            ),
        )
    repeats = None
    shown = max((max(t.first_trials, t.second_trials) for t in tasks), default=1)
    options = [r for r in _REPEATS if r > shown]
    if tasks and _pass_fail(tasks) and options:
        repeats = _smallest(
            options,
            lambda r: _reaches(
                lambda rng: [_repeated(t, r, rng) for t in tasks],
                threshold,
                margin,
                min_tasks,
                seed,
                simulations,
            ),
        )
    return Settle(more, steps[-1], repeats, options[-1] if options else shown)


def _smallest(options: Sequence[int], reaches: Callable[[int], bool]) -> int | None:
    """The smallest option that reaches POWER, by bisection (the chance grows with the
    option); None when the largest does not."""
    if not options or not reaches(options[-1]):
        return None
    low, high = -1, len(options) - 1
    while high - low > 1:
        middle = (low + high) // 2
        if reaches(options[middle]):
            high = middle
        else:
            low = middle
    return options[high]


def _reaches(
    draw: Callable[[random.Random], list[PairedTask]],
    threshold: float,
    margin: float | None,
    min_tasks: int,
    seed: int,
    simulations: int,
) -> bool:
    """Whether the rule decides in at least POWER of ``simulations`` runs drawn by ``draw``;
    it stops as soon as the count is sure either way."""
    rng = random.Random(seed)
    needed = math.ceil(POWER * simulations)
    decided = 0
    for done in range(simulations):
        decided += decides(draw(rng), threshold, margin, min_tasks, fast=True)
        if decided >= needed:
            return True
        if decided + simulations - done - 1 < needed:
            return False
    return False


def decides(
    tasks: Sequence[PairedTask],
    threshold: float,
    margin: float | None,
    min_tasks: int,
    *,
    fast: bool = False,
) -> bool:
    """Whether one comparison's rule gives a verdict on ``tasks`` at its Holm step level.

    ``fast`` (the simulations) takes the sign-flip p of ``NORMAL_FROM`` or more differing
    tasks from its normal approximation: the sum of +-d over every sign arrangement has mean 0
    and variance sum(d^2), and counting 2^n arrangements over and over would make the estimate
    too slow to print."""
    if len(tasks) < max(min_tasks, 2):
        return False
    # No equivalence to find: a p that misses settles it without the interval.
    if margin is None and _p_value(tasks, fast) >= threshold:
        return False
    interval, _ = pair_interval(tasks, 1 - threshold)
    if interval is None:
        return False
    if margin is not None and -margin < interval.low and interval.high < margin:
        return True
    if not (interval.low > 0 or interval.high < 0):
        return False
    return margin is None or _p_value(tasks, fast) < threshold


def _p_value(tasks: Sequence[PairedTask], fast: bool) -> float:
    differences = [t.difference for t in tasks if abs(t.difference) > 1e-12]
    if fast and len(differences) >= NORMAL_FROM and design_of(tasks) == "repeats":
        spread = math.sqrt(sum(d * d for d in differences))
        z = abs(sum(differences)) / spread
        return math.erfc(z / math.sqrt(2))
    return pair_test(tasks, draws=_SIM_DRAWS).p_value


def _pass_fail(tasks: Sequence[PairedTask]) -> bool:
    return all(
        abs(t.first * t.first_trials - round(t.first * t.first_trials)) < 1e-9
        and abs(t.second * t.second_trials - round(t.second * t.second_trials)) < 1e-9
        for t in tasks
    )


def _repeated(task: PairedTask, repeats: int, rng: random.Random) -> PairedTask:
    first = sum(rng.random() < task.first for _ in range(repeats)) / repeats
    second = sum(rng.random() < task.second for _ in range(repeats)) / repeats
    return PairedTask(task.task, first, second, repeats, repeats)
