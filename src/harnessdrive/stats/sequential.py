"""A confidence sequence for a mean difference in [-1, 1], valid however often it is looked at.

The method is Waudby-Smith and Ramdas's hedged capital process with predictable plug-in bets
("Estimating means of bounded random variables by betting", JRSS B, 2023). For each candidate
mean m, two gamblers start with one unit: one bets that the observations run above m, the other
below, each staking a fraction of their capital chosen from the data seen so far only. Where m
is the true mean, neither bet is favourable, so their capital is a nonnegative martingale and
reaches 2/alpha with probability at most alpha/2 at ANY time (Ville's inequality). The sequence
is every m where neither gambler has yet reached 2/alpha; a value once ruled out stays out (the
running intersection), so a decision never flips back.

Observations are in [-1, 1] (a difference of pass rates); the bets work on z = (x + 1) / 2 in
[0, 1], the scale of the paper. Each capital process is monotone in m (the upward bettor's
shrinks as m grows, the downward one's grows), so "the sequence lies above 0" is exactly "the
upward bettor at m = 0 has reached 2/alpha": decisions read three points, 0 and +-margin, and
need no grid; the printed interval reads a grid of points and rounds outwards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

SequentialVerdict = Literal["better", "worse", "equivalent"]

TRUNCATION = 0.75
"""The largest share of a bettor's capital staked, as a share of what keeps it positive (the
paper's c; it suggests 1/2 or 3/4)."""

GRID_STEP = 0.01
"""Spacing of the candidate means the printed interval reads, on the difference scale."""


@dataclass(frozen=True)
class Interval:
    lower: float
    upper: float

    def excludes_zero(self) -> bool:
        return self.lower > 0 or self.upper < 0


class BettingSequence:
    """An anytime-valid confidence sequence at level ``1 - alpha`` for the mean of observations
    in [-1, 1] with a common conditional mean (paired trials on tasks drawn at random, say).

    ``points`` are the candidate means (difference scale) tracked exactly; ``grid`` adds a grid
    of them for :attr:`interval`. Adding an observation costs time in proportion to the points.
    """

    def __init__(self, alpha: float, points: tuple[float, ...] = (0.0,), grid: bool = True):
        if not 0 < alpha < 1:
            raise ValueError(f"alpha lies in (0, 1), not {alpha}")
        steps = round(2 / GRID_STEP)
        grid_points = [-1 + 2 * i / steps for i in range(1, steps)] if grid else []
        self.alpha = alpha
        self.points = tuple(sorted({round(p, 12) for p in (*points, *grid_points)}))
        for point in self.points:
            if not -1 < point < 1:
                raise ValueError(f"a candidate mean lies in (-1, 1), not {point}")
        self._threshold = math.log(2 / alpha)  # each half of the hedge must reach 2/alpha
        self._log_up = [0.0] * len(self.points)
        self._log_down = [0.0] * len(self.points)
        self._ruled_out_below = [False] * len(self.points)  # the mean is above this point
        self._ruled_out_above = [False] * len(self.points)  # the mean is below this point
        self.count = 0
        self.total = 0.0
        self._z_sum = 0.0
        self._z_mean = 0.5  # the plug-in mean with one pseudo-observation at 1/2
        self._z_squares = 0.25  # the plug-in variance's numerator, with its pseudo-observation

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def add(self, value: float) -> None:
        if not -1 <= value <= 1:
            raise ValueError(f"an observation lies in [-1, 1], not {value}")
        z = (value + 1) / 2
        t = self.count + 1
        variance = self._z_squares / t  # sigma-hat squared of the first t - 1 observations
        for i, point in enumerate(self.points):
            m = (point + 1) / 2
            gap = self._z_mean - m
            # Each bettor stakes about the share that would grow its capital fastest were the
            # plug-in mean and variance the truth (aGRAPA), only in its own direction.
            growth = gap / (variance + gap * gap)
            up = min(max(growth, 0.0), TRUNCATION / m)
            down = min(max(-growth, 0.0), TRUNCATION / (1 - m))
            self._log_up[i] += math.log1p(up * (z - m))
            self._log_down[i] += math.log1p(-down * (z - m))
            if self._log_up[i] >= self._threshold:
                self._ruled_out_below[i] = True
            if self._log_down[i] >= self._threshold:
                self._ruled_out_above[i] = True
        self.count = t
        self.total += value
        # The plug-ins are updated after the bet: each bet uses only what came before it.
        self._z_sum += z
        self._z_mean = (0.5 + self._z_sum) / (t + 1)
        self._z_squares += (z - self._z_mean) ** 2

    def above(self, point: float) -> bool:
        """Whether the mean has been shown to be above ``point`` (a tracked point)."""
        return self._ruled_out_below[self.points.index(round(point, 12))]

    def below(self, point: float) -> bool:
        """Whether the mean has been shown to be below ``point`` (a tracked point)."""
        return self._ruled_out_above[self.points.index(round(point, 12))]

    @property
    def interval(self) -> Interval:
        """The running intersection, rounded outwards to the tracked points."""
        lower = max(
            (p for p, out in zip(self.points, self._ruled_out_below, strict=True) if out),
            default=-1.0,
        )
        upper = min(
            (p for p, out in zip(self.points, self._ruled_out_above, strict=True) if out),
            default=1.0,
        )
        return Interval(lower, max(lower, upper))


def decide(sequence: BettingSequence, margin: float | None) -> SequentialVerdict | None:
    """``better`` when the sequence lies above 0, ``worse`` below, ``equivalent`` within
    +-``margin``; None while it is open."""
    if sequence.above(0.0):
        return "better"
    if sequence.below(0.0):
        return "worse"
    if margin is not None and sequence.above(-margin) and sequence.below(margin):
        return "equivalent"
    return None


def tracked_points(margin: float | None) -> tuple[float, ...]:
    """The candidate means :func:`decide` reads."""
    return (0.0,) if margin is None else (-margin, 0.0, margin)
