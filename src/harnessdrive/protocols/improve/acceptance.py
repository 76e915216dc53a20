"""When a measured state is better than another, beyond the noise of the measurements.

Every sample is kept. The difference of the two means is judged with Welch's interval: with
``d`` the improvement of the means (positive is better) and ``se`` its standard error from both
sets of samples, a state is accepted when the lower end of the 95% interval, ``d - t * se``,
is more than ``margin`` times the old mean. With one sample each (a deterministic objective) the
interval is the difference itself, and any improvement beyond ``margin`` is accepted.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from harnessdrive.tasks.improve_models import Direction

# Two-sided 95% quantiles of Student's t by degrees of freedom (1..30); 1.96 beyond.
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_BOOTSTRAP_RESAMPLES = 2000
_BOOTSTRAP_SEED = 13


@dataclass(frozen=True)
class Improvement:
    """The relative improvement of ``new`` over ``old`` (0.1 is 10% better) and its interval."""

    relative: float
    low: float
    high: float

    def beyond(self, margin: float) -> bool:
        """Better by more than ``margin`` (relative) once the noise is taken off."""
        return self.relative > 0 and self.low > margin


def improvement(direction: Direction, old: Sequence[float], new: Sequence[float]) -> Improvement:
    """How much better ``new`` is than ``old``, relative to the old mean, with a 95% interval."""
    old_mean, new_mean = statistics.fmean(old), statistics.fmean(new)
    gain = old_mean - new_mean if direction == "minimize" else new_mean - old_mean
    if old_mean <= 0:
        # Nothing beats 0 when minimising; from 0 upwards any gain is unbounded in relative terms.
        relative = math.inf if gain > 0 else 0.0
        return Improvement(relative, relative, relative)
    half = _t95(old, new) * _standard_error(old, new)
    return Improvement(gain / old_mean, (gain - half) / old_mean, (gain + half) / old_mean)


def _variance_term(samples: Sequence[float]) -> float:
    return statistics.variance(samples) / len(samples) if len(samples) > 1 else 0.0


def _standard_error(old: Sequence[float], new: Sequence[float]) -> float:
    return math.sqrt(_variance_term(old) + _variance_term(new))


def _t95(old: Sequence[float], new: Sequence[float]) -> float:
    """Welch-Satterthwaite degrees of freedom, looked up in the t table."""
    terms = [(_variance_term(s), len(s) - 1) for s in (old, new) if len(s) > 1]
    total = sum(term for term, _ in terms)
    if total == 0:
        return 0.0
    df = total**2 / sum(term**2 / dof for term, dof in terms if term > 0)
    index = max(int(df), 1)
    return _T95[index - 1] if index <= len(_T95) else 1.96


@dataclass(frozen=True)
class Ratio:
    """How many times better: baseline ÷ final when minimising, final ÷ baseline when
    maximising, with a 95% bootstrap interval of the ratio of medians."""

    value: float
    low: float
    high: float


def ratio(direction: Direction, baseline: Sequence[float], final: Sequence[float]) -> Ratio | None:
    """The improvement ratio; None where it is not finite (a minimised 0, a baseline of 0)."""
    point = _ratio_of(direction, statistics.median(baseline), statistics.median(final))
    if point is None:
        return None
    if len(baseline) == 1 and len(final) == 1:
        return Ratio(point, point, point)
    draw = random.Random(_BOOTSTRAP_SEED)
    found = []
    for _ in range(_BOOTSTRAP_RESAMPLES):
        b = statistics.median(draw.choices(baseline, k=len(baseline)))
        f = statistics.median(draw.choices(final, k=len(final)))
        each = _ratio_of(direction, b, f)
        if each is not None:
            found.append(each)
    if not found:
        return Ratio(point, point, point)
    found.sort()
    low = found[int(0.025 * (len(found) - 1))]
    high = found[math.ceil(0.975 * (len(found) - 1))]
    return Ratio(point, low, high)


def _ratio_of(direction: Direction, baseline: float, final: float) -> float | None:
    top, bottom = (baseline, final) if direction == "minimize" else (final, baseline)
    return top / bottom if bottom > 0 else None
