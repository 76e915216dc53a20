"""Tango's score interval for a paired difference of proportions (1998): two arms, one
pass/fail trial each on every task.

The interval holds every difference d that the score test does not reject: the observed
difference of the discordant counts, against its standard error computed with the cell
probabilities refitted under d. Unlike the plain normal interval (and Newcombe's hybrid, which
is zero-width when no task differs) it has width whatever the counts, and stays in [-1, 1]."""

from __future__ import annotations

import math
from functools import lru_cache

from harnessdrive.stats.intervals import Interval, z_value

_BISECTIONS = 60


def restricted_second_only(only_first: int, only_second: int, tasks: int, d: float) -> float:
    """The maximum-likelihood P(only the second arm passes) when the difference is ``d``.

    The likelihood's derivative is zero at a root of 2n p^2 + B p - c21 d (1 - d) = 0 with
    B = -(c12 + c21) + (2n - c12 + c21) d; the larger root is the one inside the simplex."""
    b = -(only_first + only_second) + (2 * tasks - only_first + only_second) * d
    root = (-b + math.sqrt(max(0.0, b * b + 8 * tasks * only_second * d * (1 - d)))) / (4 * tasks)
    return min(max(root, max(0.0, -d)), (1 - d) / 2)


def score_statistic(only_first: int, only_second: int, tasks: int, d: float) -> float:
    """Tango's z for the difference ``d``: positive when the data lie above it."""
    p21 = restricted_second_only(only_first, only_second, tasks, d)
    variance = tasks * (2 * p21 + d * (1 - d))
    gap = only_first - only_second - tasks * d
    if variance <= 0:
        return 0.0 if gap == 0 else math.copysign(math.inf, gap)
    return gap / math.sqrt(variance)


@lru_cache(maxsize=4096)
def tango_interval(
    only_first: int, only_second: int, tasks: int, confidence: float = 0.95
) -> Interval:
    """Every difference the two-sided score test at 1 - ``confidence`` does not reject, from
    the discordant counts and the number of paired tasks."""
    if tasks <= 0:
        return Interval(-1.0, 1.0)
    z = z_value(confidence)
    estimate = (only_first - only_second) / tasks

    def edge(target: float, inside: float, outside: float) -> float:
        # The statistic falls as d rises; bisect for where it crosses +-z.
        if abs(score_statistic(only_first, only_second, tasks, outside)) <= z:
            return outside
        for _ in range(_BISECTIONS):
            middle = (inside + outside) / 2
            value = score_statistic(only_first, only_second, tasks, middle)
            if (value > target) == (target > 0):
                outside = middle
            else:
                inside = middle
        return (inside + outside) / 2

    return Interval(edge(z, estimate, -1.0), edge(-z, estimate, 1.0))
