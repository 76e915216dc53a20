"""A seeded cluster bootstrap: tasks are resampled whole, so repeats of one task never count
as independent evidence."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

from harnessdrive.stats.intervals import Interval

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0


def cluster_bootstrap(
    per_task: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Interval | None:
    """The percentile interval of the mean of ``per_task`` (one value per task: a task's
    repeats already averaged), resampling tasks with replacement.

    None for fewer than two tasks: one task has no spread to resample, and a zero-width
    interval from it would claim a certainty it cannot have."""
    if len(per_task) < 2:
        return None
    if resamples < 1:
        raise ValueError("the bootstrap needs at least one resample")
    rng = random.Random(seed)
    count = len(per_task)
    values = list(per_task)
    means = sorted(statistics.fmean(rng.choices(values, k=count)) for _ in range(resamples))
    tail = (1 - confidence) / 2
    return Interval(_quantile(means, tail), _quantile(means, 1 - tail))


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default rule)."""
    position = q * (len(ordered) - 1)
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    fraction = position - below
    return ordered[below] + (ordered[above] - ordered[below]) * fraction
