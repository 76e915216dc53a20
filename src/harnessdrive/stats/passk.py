"""Unbiased pass@k and pass^k from n repeats of which c passed.

pass@k: the chance that at least one of k repeats drawn without replacement passes;
pass^k: the chance that all k pass (how reliably an arm solves a task, not whether it can)."""

from __future__ import annotations

import math


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"{c} passes do not fit in {n} repeats")
    if not 1 <= k <= n:
        raise ValueError(f"k must lie between 1 and the {n} repeats, not {k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k) / C(n, k)."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """C(c, k) / C(n, k)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)
