"""Exact tests on counts: the sign test and McNemar's test for paired outcomes."""

from __future__ import annotations

import math


def binomial_two_sided(successes: int, trials: int, p: float = 0.5) -> float:
    """The exact two-sided binomial p-value: the probability of every count no likelier than
    the one observed (the rule scipy's ``binomtest`` uses)."""
    if trials == 0:
        return 1.0
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes do not fit in {trials} trials")
    pmf = [math.comb(trials, k) * p**k * (1 - p) ** (trials - k) for k in range(trials + 1)]
    observed = pmf[successes]
    # A relative tolerance keeps counts of equal probability (the mirror image at p=0.5) in.
    tolerance = observed * (1 + 1e-7)
    return min(1.0, sum(value for value in pmf if value <= tolerance))


def sign_test(positive: int, negative: int) -> float:
    """Two-sided exact sign test: ``positive`` pairs went one way, ``negative`` the other
    (ties are left out before calling)."""
    return binomial_two_sided(positive, positive + negative)


def mcnemar(only_first: int, only_second: int, *, exact: bool = True) -> float:
    """McNemar's test on paired pass/fail outcomes, from the two discordant counts.

    Exact: the binomial test on the discordant pairs (the sign test). Otherwise the chi-square
    statistic with continuity correction on one degree of freedom."""
    if exact:
        return sign_test(only_first, only_second)
    discordant = only_first + only_second
    if discordant == 0:
        return 1.0
    statistic = (abs(only_first - only_second) - 1) ** 2 / discordant
    # The chi-square survival function on one degree of freedom.
    return math.erfc(math.sqrt(max(statistic, 0.0) / 2))
