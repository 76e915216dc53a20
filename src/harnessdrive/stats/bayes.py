"""P(better): the chance, given these tasks, that the first arm's mean per-task rate is above
the second's, from a Bayesian bootstrap over tasks (Rubin, 1981): each draw weighs the tasks
by a flat Dirichlet and asks which way the weighted mean difference goes."""

from __future__ import annotations

import random
from collections.abc import Sequence

DRAWS = 4000


def probability_better(differences: Sequence[float], *, seed: int = 0, draws: int = DRAWS) -> float:
    """P(mean difference > 0); a draw at exactly 0 counts half. 0.5 without any task."""
    if not differences:
        return 0.5
    rng = random.Random(seed)
    above = 0.0
    for _ in range(draws):
        weights = [rng.expovariate(1.0) for _ in differences]
        total = sum(w * d for w, d in zip(weights, differences, strict=True))
        above += 1.0 if total > 1e-12 else 0.5 if total > -1e-12 else 0.0
    return above / draws
