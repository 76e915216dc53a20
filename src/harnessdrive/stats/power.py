"""How much evidence a comparison needs: repeats per arm to tell two pass rates apart."""

from __future__ import annotations

import math

from harnessdrive.stats.intervals import z_value


def repeats_needed(
    first_rate: float, second_rate: float, *, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Repeats per arm of one task to tell pass rates ``first_rate`` and ``second_rate`` apart
    (two-sided test of two proportions at ``alpha``, probability ``power``)."""
    if first_rate == second_rate:
        raise ValueError("equal rates cannot be told apart by any number of repeats")
    for rate in (first_rate, second_rate):
        if not 0 <= rate <= 1:
            raise ValueError(f"a pass rate lies in [0, 1], not {rate}")
    z_alpha, z_power = z_value(1 - alpha), one_sided_z(power)
    pooled = (first_rate + second_rate) / 2
    null = z_alpha * math.sqrt(2 * pooled * (1 - pooled))
    alternative = z_power * math.sqrt(
        first_rate * (1 - first_rate) + second_rate * (1 - second_rate)
    )
    return math.ceil(((null + alternative) / (first_rate - second_rate)) ** 2)


def one_sided_z(probability: float) -> float:
    """The one-sided normal quantile (0.84 for 0.8)."""
    return z_value(2 * probability - 1)
