"""The scoreboard's lines for improvement trials: each trial's curve, ratio and score."""

from __future__ import annotations

from collections.abc import Sequence

from harnessdrive.store.results import TrialResult

CURVE = "improve.curve."


def curve(result: TrialResult) -> list[float]:
    """The baseline, then the best value after each round (empty for other trials)."""
    count = sum(name.startswith(CURVE) for name in result.metrics)
    return [result.metrics[f"{CURVE}{n}"] for n in range(count)]


def improvement_notes(results: Sequence[TrialResult]) -> list[str]:
    notes = []
    for result in sorted(results, key=lambda r: (r.task, r.variant_label, r.repetition)):
        points = curve(result)
        if not points:
            continue
        shown = " -> ".join(f"{value:g}" for value in points)
        ratio = result.metrics.get("improve.ratio")
        times = f"{ratio:.3g}x" if ratio is not None else "no ratio"
        if result.outcome == "tampered":  # improved nothing, whatever its curve shows
            times = "tampered: no improvement"
        kept = int(result.metrics.get("improve.rounds_kept", 0))
        score = f"{result.score:.2f}" if result.score is not None else "-"
        notes.append(
            f"Improvement curve of {result.task}/{result.variant_label} r{result.repetition}: "
            f"{shown} ({times}, score {score}, {kept} of {len(points) - 1} rounds kept)."
        )
    return notes
