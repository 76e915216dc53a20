"""An improvement trial's metrics, from its baseline, best and final samples and its rounds
(docs/improvement.md, "Metrics")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from harnessdrive.protocols.improve.acceptance import improvement, ratio
from harnessdrive.protocols.improve.history import RoundEntry
from harnessdrive.protocols.improve.scores import anytime_score, progress, value_score
from harnessdrive.tasks.improve_models import ImproveSpec


@dataclass(frozen=True)
class TrialScore:
    passed: bool
    """The final state passes the gate and beats the baseline beyond ``min_improvement``."""
    score: float
    metrics: dict[str, float]


def trial_score(
    spec: ImproveSpec,
    baseline: Sequence[float],
    best: float,
    final: Sequence[float],
    final_gate_ok: bool,
    history: Sequence[RoundEntry],
    refused: int,
) -> TrialScore:
    """The verdict's numbers: ``baseline`` and ``final`` are samples; ``best`` a median."""
    direction = spec.objective.direction
    gain = improvement(direction, baseline, final) if final_gate_ok else None
    passed = gain is not None and gain.beyond(spec.min_improvement)
    base_value = median(baseline)
    final_value = median(final) if final else base_value
    found = ratio(direction, baseline, final) if final_gate_ok else None
    score = value_score(direction, base_value, final_value) if final_gate_ok else 0.0
    curve = [base_value, *(entry.best for entry in history)]
    metrics: dict[str, float] = {
        "improve.baseline": base_value,
        "improve.best": best,
        "improve.final": final_value,
        "improve.anytime": anytime_score(direction, curve),
        "improve.evaluator_calls": float(sum(e.evaluator_calls for e in history)),
        "improve.evaluator_refused": float(refused),
        "improve.rounds_kept": float(sum(e.state == "kept" for e in history)),
        "improve.baseline_spread": spread(baseline),
    }
    for index, point in enumerate(curve):
        metrics[f"improve.curve.{index}"] = point
    if gain is not None and math.isfinite(gain.relative):
        metrics.update(
            {
                "improve.gain": gain.relative,
                "improve.gain_low": gain.low,
                "improve.gain_high": gain.high,
            }
        )
    if found is not None:
        metrics.update(
            {
                "improve.ratio": found.value,
                "improve.ratio_low": found.low,
                "improve.ratio_high": found.high,
                "improve.log_ratio": math.log(found.value),
            }
        )
    reached = progress(base_value, final_value, spec.objective.target)
    if reached is not None and final_gate_ok:
        metrics["improve.progress"] = reached
    return TrialScore(passed, round(score, 6), metrics)


def spread(samples: Sequence[float]) -> float:
    """Half the samples' range relative to their median: ±5% jitter reads about 0.05."""
    middle = median(samples)
    return (max(samples) - min(samples)) / (2 * middle) if middle > 0 else 0.0
