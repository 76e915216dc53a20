"""Confidence intervals: Wilson's for a pass rate, a normal one for a mean."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Interval:
    low: float
    high: float

    @property
    def width(self) -> float:
        return self.high - self.low

    def excludes(self, value: float) -> bool:
        return value < self.low or value > self.high


def z_value(confidence: float) -> float:
    """The two-sided normal quantile for ``confidence`` (1.96 for 0.95)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    return statistics.NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(successes: float, trials: int, confidence: float = 0.95) -> Interval:
    """Wilson's score interval for a rate of ``successes`` in ``trials``.

    Unlike the plain normal interval it never leaves [0, 1] and is not zero-width at 0 or n
    passes, so "4 of 4" still says how little four trials prove. ``successes`` may be a sum of
    scores in [0, 1]."""
    if trials <= 0:
        return Interval(0.0, 1.0)
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes do not fit in {trials} trials")
    z = z_value(confidence)
    rate = successes / trials
    denominator = 1 + z * z / trials
    centre = (rate + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials)) / denominator
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


def wilson_rate(rate: float, trials: float, confidence: float = 0.95) -> Interval:
    """Wilson's interval for an observed ``rate`` worth ``trials`` trials, a count that may be
    fractional (an effective number of trials)."""
    if trials <= 0:
        return Interval(0.0, 1.0)
    if not 0 <= rate <= 1:
        raise ValueError(f"a rate lies in [0, 1], not {rate}")
    z = z_value(confidence)
    denominator = 1 + z * z / trials
    centre = (rate + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials)) / denominator
    return Interval(max(0.0, centre - half), min(1.0, centre + half))
