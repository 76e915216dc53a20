"""The arms worth choosing between: pass rate against cost, each at its pessimistic bound."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ParetoPoint:
    name: str
    pass_rate: float
    """The pessimistic pass rate: the lower bound of its interval."""
    cost: float
    """The pessimistic cost per trial: the upper bound of its interval."""


def pareto_frontier(points: Sequence[ParetoPoint]) -> list[str]:
    """Names of the points no other point beats on both (at least as high a pass rate for at
    most the cost, and strictly better on one), cheapest first."""
    frontier = [
        p
        for p in points
        if not any(
            q.pass_rate >= p.pass_rate
            and q.cost <= p.cost
            and (q.pass_rate > p.pass_rate or q.cost < p.cost)
            for q in points
        )
    ]
    return [p.name for p in sorted(frontier, key=lambda p: (p.cost, -p.pass_rate, p.name))]
