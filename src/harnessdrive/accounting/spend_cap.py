"""The spend cap as the run driver sees it between trials.

*Counted* spend is everything already charged in the results folder, every attempt of every run
included. Each trial running now *reserves* its high estimate. A trial may start only while
counted + reserved is below the cap, so when every trial stays within its high estimate the
counted spend ends below cap + one high estimate (the last trial's), however many run at once.

- counted >= cap: no trial starts; the rest are skipped.
- counted + reserved >= cap: wait for a running trial to finish (it may have cost less than it
  reserved).
- otherwise: start, and offer the harness the budget left: cap − counted − reserved.

Not thread-safe: only the driver thread uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from harnessdrive.accounting.call_cost import to_usd

_ZERO = Decimal(0)


@dataclass(frozen=True)
class CapDecision:
    action: Literal["start", "wait", "stop"]
    budget: Decimal | None = None
    """For ``start``: what the trial may spend before the cap is reached."""
    reason: str = ""


class SpendCap:
    def __init__(self, limit: Decimal, counted: Decimal = _ZERO) -> None:
        if limit <= 0:
            raise ValueError(f"a spend cap must be more than $0, not ${limit}")
        self.limit = limit
        self.counted = counted
        self._reserved: dict[str, Decimal] = {}

    @property
    def reserved(self) -> Decimal:
        return sum(self._reserved.values(), _ZERO)

    def decide(self) -> CapDecision:
        if self.counted >= self.limit:
            return CapDecision(
                "stop",
                reason=(
                    f"spend cap reached: ${to_usd(self.counted):.2f} counted of the "
                    f"${to_usd(self.limit):g} cap; a higher cap runs it"
                ),
            )
        left = self.limit - self.counted - self.reserved
        if left <= 0:
            return CapDecision("wait", reason="running trials have reserved the rest of the cap")
        return CapDecision("start", budget=left)

    def reserve(self, key: str, amount: Decimal) -> None:
        """Set aside ``amount`` for a trial that starts now."""
        self._reserved[key] = max(amount, _ZERO)

    def settle(self, key: str, counted: Decimal) -> None:
        """A trial finished: drop its reservation and take the new counted total."""
        self._reserved.pop(key, None)
        self.counted = counted
