"""The scores of an improvement trial: the score of a value, the anytime score, progress."""

from __future__ import annotations

from collections.abc import Sequence

from harnessdrive.tasks.improve_models import Direction


def value_score(direction: Direction, baseline: float, value: float) -> float:
    """``1 - 1/ratio`` for a value reached: 0 without improvement, 1 for a minimised 0."""
    if direction == "minimize":
        return max(0.0, 1.0 - value / baseline) if baseline > 0 else 0.0
    return max(0.0, 1.0 - baseline / value) if value > 0 else 0.0


def anytime_score(direction: Direction, curve: Sequence[float]) -> float:
    """The mean, over the rounds, of the score of the best value after each round.

    ``curve`` is the baseline followed by the best value after each round. A trial that reaches
    its best in round 1 scores that best's score; one that gets there only in the last of three
    rounds scores a third of it: it rewards improving early, as a time-bounded user sees it.
    """
    baseline, after = curve[0], curve[1:]
    if not after:
        return 0.0
    return sum(value_score(direction, baseline, v) for v in after) / len(after)


def progress(baseline: float, final: float, target: float | None) -> float | None:
    """The share of the way from the baseline to the target (1.0 reached it; above beat it)."""
    if target is None or target == baseline:
        return None
    return (baseline - final) / (baseline - target)
