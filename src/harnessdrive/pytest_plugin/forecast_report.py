"""The dry run's lines in the terminal summary: each cell's forecast and the total."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def forecast_lines(forecasts: Sequence[dict[str, Any]]) -> list[str]:
    lines = []
    low = high = 0.0
    for f in sorted(forecasts, key=lambda f: str(f["node"])):
        lines.append(f"  forecast ${f['low']:.4f}-${f['high']:.4f}  ({f['basis']})  {f['node']}")
        low += float(f["low"])
        high += float(f["high"])
    lines.append(f"  total forecast: ${low:.4f}-${high:.4f} across {len(forecasts)} cell(s)")
    lines.append("  " + width_note(forecasts, low, high))
    return lines


def width_note(forecasts: Sequence[dict[str, Any]], low: float, high: float) -> str:
    """How wide the forecast is, and why: a range from assumptions spans a short run on the
    cheapest model to a long one on the dearest; one from history spans what was measured."""
    assumed = sum(1 for f in forecasts if f["basis"] == "assumption")
    by_effort = sum(1 for f in forecasts if str(f["basis"]).startswith("assumption, effort"))
    measured = sum(1 for f in forecasts if f["basis"] == "history")
    ratio = f"{high / low:.1f}x wide" if low > 0 else "open-ended"
    why = []
    if assumed:
        why.append(
            f"{assumed} cell(s) from token assumptions (a short run to a long one: no effort "
            "named, and no cell of that model has run)"
        )
    if by_effort:
        why.append(
            f"{by_effort} cell(s) from token assumptions narrowed by effort (each rung takes "
            "its part of the short-to-long span, until a cell of that model and effort has run)"
        )
    if measured:
        why.append(f"{measured} cell(s) from the spend measured in earlier sessions")
    return f"the total is {ratio}: " + ("; ".join(why) or "no priced cell")
