"""A trial's per-call prices (``cost.json``), read back per round."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harnessdrive.accounting.call_cost import Pricing


def ledger_costs(ledger: Path, counts: Sequence[int]) -> list[tuple[float | None, ...]]:
    """Each round's per-call prices from the trial's ``cost.json`` (which prices every round's
    calls, in order; ``counts``: how many each round made); none where it is missing or does
    not add up."""
    try:
        pricing = Pricing.model_validate_json(ledger.read_bytes())
    except (OSError, ValueError):
        return [() for _ in counts]
    if len(pricing.calls) != sum(counts):
        return [() for _ in counts]
    prices = [call.usd for call in pricing.calls]
    found: list[tuple[float | None, ...]] = []
    for count in counts:
        found.append(tuple(prices[:count]))
        prices = prices[count:]
    return found
