"""The spend cap on the driver thread: before each trial, start it, wait, or skip it.

Only trials whose harness spends tokens are gated; built-in scripted agents cost nothing and
always run. Counted spend is re-read from the store after every trial, so it includes every
attempt in the results folder, from this run and from earlier ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal, Protocol

from harnessdrive.accounting import to_usd
from harnessdrive.accounting.plan_pricing import PlanPricing
from harnessdrive.accounting.spend_cap import SpendCap
from harnessdrive.store.store import Store
from harnessdrive.tasks.models import VariantSpec

_MICRO_USD = Decimal("0.000001")


def _usd(amount: float) -> Decimal:
    """A float total from the index as exact micro-dollars (it sums floats)."""
    return Decimal(repr(amount)).quantize(_MICRO_USD)


class GatedTrial(Protocol):
    """What the gate reads of a planned trial (the driver's ``PlannedTrial``)."""

    @property
    def trial_id(self) -> str: ...

    @property
    def variant(self) -> VariantSpec: ...


@dataclass(frozen=True)
class Gate:
    action: Literal["start", "wait", "skip"]
    budget_usd: float | None = None
    """The budget left under the cap, for a harness that takes a cap of its own."""
    reason: str | None = None
    """Why a trial is skipped."""


class SpendGate:
    def __init__(self, pricing: PlanPricing, store: Store, max_usd: float | None) -> None:
        self._pricing = pricing
        self._store = store
        self.max_usd = max_usd
        self._cap = (
            None
            if max_usd is None
            else SpendCap(Decimal(repr(max_usd)), _usd(store.charged_total()))
        )
        self.skipped = 0

    def _gated(self, trial: GatedTrial) -> bool:
        found = self._pricing.for_variant(trial.variant)
        return self._cap is not None and found is not None and found.uses_model

    def before(self, trial: GatedTrial) -> Gate:
        """May this trial start now?"""
        if self._cap is None or not self._gated(trial):
            return Gate("start")
        decision = self._cap.decide()
        if decision.action == "stop":
            self.skipped += 1
            return Gate("skip", reason=decision.reason)
        if decision.action == "wait":
            return Gate("wait")
        assert decision.budget is not None
        return Gate("start", budget_usd=to_usd(decision.budget))

    def started(self, trial: GatedTrial) -> None:
        """Reserve the trial's high estimate until it is recorded."""
        found = self._pricing.for_variant(trial.variant)
        if self._cap is not None and found is not None and self._gated(trial):
            self._cap.reserve(trial.trial_id, found.high)

    def finished(self, trial: GatedTrial) -> None:
        """The trial is recorded: release its reservation, count what it was charged."""
        if self._cap is not None:
            self._cap.settle(trial.trial_id, _usd(self._store.charged_total()))

    @property
    def counted_usd(self) -> float | None:
        return None if self._cap is None else to_usd(self._cap.counted)

    def describe(self) -> str | None:
        """One line for the end of a run: counted spend against the cap."""
        if self._cap is None or self.max_usd is None:
            return None
        line = (
            f"Spend counted in this results folder: ${to_usd(self._cap.counted):.2f} "
            f"of the ${self.max_usd:g} spend cap."
        )
        if self.skipped:
            line += (
                f" {self.skipped} trial(s) skipped at the cap; the same run with a higher cap "
                "runs only those."
            )
        return line
