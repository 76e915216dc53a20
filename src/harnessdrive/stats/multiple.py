"""Corrections for comparing many arms at once: Holm's step-down and Benjamini–Hochberg."""

from __future__ import annotations

from collections.abc import Sequence


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (family-wise error), in the order given."""
    count = len(p_values)
    order = sorted(range(count), key=lambda i: p_values[i])
    adjusted = [0.0] * count
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (count - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg q-values (false discovery rate), in the order given."""
    count = len(p_values)
    order = sorted(range(count), key=lambda i: p_values[i], reverse=True)
    adjusted = [0.0] * count
    running = 1.0
    for position, index in enumerate(order):
        rank = count - position
        running = min(running, p_values[index] * count / rank)
        adjusted[index] = min(1.0, running)
    return adjusted
