"""Student's t distribution from the regularized incomplete beta function (no scipy at run
time): the quantile a t interval needs, and the two-sided p of a paired t test."""

from __future__ import annotations

import math
from functools import lru_cache

_TINY = 1e-300
_STEPS = 300


def incomplete_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, by its continued fraction (the
    modified Lentz evaluation), on the side of x where the fraction converges fast."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x must lie in [0, 1], not {x}")
    if x in (0.0, 1.0):
        return x
    if x > (a + 1) / (a + b + 2):
        return 1.0 - incomplete_beta(1.0 - x, b, a)
    log_front = a * math.log(x) + b * math.log1p(-x) - _log_beta(a, b)
    return math.exp(log_front) * _fraction(x, a, b) / a


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _fraction(x: float, a: float, b: float) -> float:
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    value = d
    for m in range(1, _STEPS):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            value *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return value


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    tail = 0.5 * incomplete_beta(df / (df + t * t), df / 2, 0.5)
    return 1.0 - tail if t > 0 else tail


@lru_cache(maxsize=1024)
def t_quantile(probability: float, df: float) -> float:
    """The t value below which ``probability`` of the distribution lies (bisection on the
    CDF; 2.571 for 0.975 on 5 degrees of freedom)."""
    if not 0 < probability < 1:
        raise ValueError(f"probability must lie strictly between 0 and 1, not {probability}")
    if probability < 0.5:
        return -t_quantile(1 - probability, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < probability:
        low, high = high, high * 2
    for _ in range(200):
        middle = (low + high) / 2
        if t_cdf(middle, df) < probability:
            low = middle
        else:
            high = middle
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p of a t statistic."""
    return min(1.0, incomplete_beta(df / (df + t * t), df / 2, 0.5))
