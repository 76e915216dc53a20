"""The live line of one cell, from the plain data on its report (no harnessdrive import)."""

from __future__ import annotations

from typing import Any


def status_line(props: dict[str, Any]) -> str:
    result = props.get("result") or {}
    totals = result.get("totals") or {}
    usage = totals.get("usage") or {}
    tokens = sum(int(usage.get(k, 0)) for k in ("input", "cache_read", "cache_write", "output"))
    usd = (result.get("cost") or {}).get("usd")
    cost = f"${usd:.4f}" if isinstance(usd, int | float) else "$?"
    seconds = float((result.get("seconds") or {}).get("total", 0.0))
    return (
        f"{result.get('outcome', '?')}  {cost}  {tokens:,} tokens  {seconds:.1f}s  "
        f"{totals.get('turns', 0)} turns  {totals.get('tool_calls', 0)} tools"
    )
