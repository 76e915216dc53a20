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
    return lines
