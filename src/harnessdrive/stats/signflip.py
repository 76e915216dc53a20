"""The paired sign-flip permutation test on per-task differences.

If two arms are the same, each task's difference is as likely to have either sign; the test
counts how many of the 2^n ways of flipping the signs give a sum at least as far from 0 as the
one observed. Pass/fail outcomes (with any repeats) put every difference on a grid of
fractions, so every arrangement is counted exactly by a subset-sum count over that grid, at any
number of tasks. Scores off any such grid are enumerated up to ``ENUMERATED`` arrangements and
drawn at random beyond, with the Monte Carlo error stated."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

ENUMERATED = 4096
"""Arrangements counted one by one when the differences lie on no grid (12 tasks)."""
DRAWS = 20_000
"""Random arrangements beyond that."""
_GRID_DENOMINATOR = 10_000
_GRID_CELLS = 400_000
_CLOSE = 1e-9

Method = Literal["exact", "Monte Carlo"]


@dataclass(frozen=True)
class SignFlip:
    p_value: float
    method: Method
    arrangements: int
    """Every arrangement (2^n, n the tasks that differ) when exact, else the random draws."""
    error: float
    """The Monte Carlo standard error of ``p_value``; 0 when exact."""


def sign_flip_test(differences: Sequence[float], *, seed: int = 0, draws: int = DRAWS) -> SignFlip:
    """Two-sided: the share of sign arrangements whose sum is at least as far from 0."""
    nonzero = [abs(d) for d in differences if abs(d) > _CLOSE]
    observed = abs(sum(differences))
    if not nonzero or observed <= _CLOSE:
        return SignFlip(1.0, "exact", 2 ** len(nonzero), 0.0)
    scale = _grid(nonzero)
    if scale is not None:
        weights = [round(d * scale) for d in nonzero]
        return SignFlip(_grid_p(weights, round(observed * scale)), "exact", 2 ** len(nonzero), 0.0)
    if 2 ** len(nonzero) <= ENUMERATED:
        far = sum(
            abs(sum(s * d for s, d in zip(signs, nonzero, strict=True))) >= observed - _CLOSE
            for signs in itertools.product((1, -1), repeat=len(nonzero))
        )
        return SignFlip(far / 2 ** len(nonzero), "exact", 2 ** len(nonzero), 0.0)
    rng = random.Random(seed)
    far = sum(
        abs(sum(d if rng.random() < 0.5 else -d for d in nonzero)) >= observed - _CLOSE
        for _ in range(draws)
    )
    # The observed arrangement counts as one of the draws, so p is never 0.
    p = (far + 1) / (draws + 1)
    return SignFlip(p, "Monte Carlo", draws, math.sqrt(p * (1 - p) / draws))


def _grid(values: Sequence[float]) -> int | None:
    """The smallest whole number that makes every value whole, if it is small enough."""
    scale = 1
    for value in values:
        fraction = Fraction(value).limit_denominator(_GRID_DENOMINATOR)
        if abs(float(fraction) - value) > _CLOSE:
            return None
        scale = math.lcm(scale, fraction.denominator)
        if scale > _GRID_DENOMINATOR:
            return None
    if scale * sum(values) > _GRID_CELLS:
        return None
    return scale


def _grid_p(weights: Sequence[int], observed: int) -> float:
    """P(|sum of +-w| >= observed) with every sign equally likely, by counting subset sums."""
    total = sum(weights)
    # chances[s]: the probability that the weights given a + sign sum to s.
    chances = [1.0] + [0.0] * total
    reach = 0
    for weight in weights:
        reach += weight
        shifted = [0.0] * weight + chances[: reach - weight + 1]
        chances = [0.5 * (a + b) for a, b in zip(chances[: reach + 1], shifted, strict=True)] + [
            0.0
        ] * (total - reach)
    # A sum of +-w is 2s - total; it is at least ``observed`` from 0 when s is far enough.
    upper = (total + observed + 1) // 2
    lower = (total - observed) // 2
    far = sum(chances[upper:]) + sum(chances[: lower + 1])
    return min(1.0, far)
