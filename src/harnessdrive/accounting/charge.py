"""What a finished agent run cost, how we know it, and what it counts toward the spend cap.

The rules, first match wins (docs/pricing.md explains them to users):

1. The run logged model calls: each is priced at its own model's record (``computed``). When some
   model has no price: a run allowed unpriced is ``unpriced`` and counts only its
   priced calls; otherwise the harness's own figure counts when it gave one (``reported``), and
   failing that the high estimate (``unpriced``).
2. No calls, but the harness reported a cost: ``reported``.
3. No usage record at all:
   - a harness whose cost cannot be known (it names no model): ``unmeasured``, $0;
   - a run allowed unpriced: ``unpriced``, $0;
   - a run that never got to work: ``none``, $0;
   - a run cut off (time limit, stopped, killed): ``estimated``, charged the high estimate;
   - any other run: ``unmeasured``, charged the high estimate, because it did model work that
     nobody counted.

A cut-off run that logged some calls is ``computed`` from them and marked partial. The harness's
own figure is kept beside ours; a difference of more than 2% is flagged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Literal

from harnessdrive.accounting.call_cost import Pricing, to_usd
from harnessdrive.accounting.cost_range import CostRange
from harnessdrive.accounting.price_book import PriceBook
from harnessdrive.transcript import ModelCall

ChargeSource = Literal["computed", "reported", "estimated", "unmeasured", "unpriced", "none"]
RunEnd = Literal["finished", "cut_off", "did_not_work"]
"""How the run ended: on its own; cut off (time limit, stop, kill); or without getting to work."""

RECONCILE_TOLERANCE = Decimal("0.02")
"""Our figure and the harness's may differ by this fraction of theirs before it is flagged."""

_ZERO = Decimal(0)


@dataclass(frozen=True)
class RunFacts:
    """What a run left us to price it with."""

    calls: Sequence[ModelCall]
    reported_usd: float | None
    ended: RunEnd
    billing: Literal["api", "subscription"] | None = None


@dataclass(frozen=True)
class ChargePolicy:
    """How the variant's runs are to be charged."""

    priced: bool
    """The harness spends tokens and says which model: its runs need prices and the cap."""
    allow_unpriced: bool = False
    """Allowed unpriced: a model without a price counts $0 instead of stopping the run."""
    estimate: CostRange | None = None
    """The per-trial range; its high end is charged when the real cost is unknown."""

    @property
    def high(self) -> Decimal:
        return self.estimate.high if self.estimate is not None else _ZERO


@dataclass(frozen=True)
class Reconciliation:
    ours: Decimal
    theirs: Decimal
    difference: Decimal | None
    """(ours − theirs) ÷ theirs; None when theirs is zero."""
    flagged: bool


@dataclass(frozen=True)
class Charge:
    source: ChargeSource
    usd: Decimal | None
    """What the run cost as far as we know; for ``estimated``, the estimate."""
    charged: Decimal
    """What counts toward the spend cap."""
    reported: Decimal | None = None
    pricing: Pricing | None = None
    partial: bool = False
    billing: Literal["api", "subscription"] | None = None
    reconciliation: Reconciliation | None = None
    estimate: CostRange | None = None
    """The range behind the charge, when the high estimate was charged."""
    note: str | None = None


def exact(amount: float) -> Decimal:
    """A float amount as the decimal it prints as (``0.1`` is ``Decimal('0.1')``)."""
    return Decimal(repr(amount))


def reconcile(ours: Decimal, theirs: Decimal | None) -> Reconciliation | None:
    """Compare our figure with the harness's; flagged past :data:`RECONCILE_TOLERANCE`."""
    if theirs is None:
        return None
    gap = abs(ours - theirs)
    if theirs == 0:
        return Reconciliation(ours, theirs, None, flagged=ours > 0)
    return Reconciliation(
        ours, theirs, (ours - theirs) / theirs, flagged=gap > RECONCILE_TOLERANCE * abs(theirs)
    )


def charge_run(facts: RunFacts, policy: ChargePolicy, book: PriceBook, *, on: date) -> Charge:
    """Apply the rules of the module docstring."""
    reported = None if facts.reported_usd is None else exact(facts.reported_usd)
    if facts.calls:
        return _from_calls(facts, policy, book.price(facts.calls, on=on), reported)

    def plain(
        source: ChargeSource, usd: Decimal | None, charged: Decimal, note: str, *, high: bool
    ) -> Charge:
        return Charge(
            source,
            usd,
            charged,
            reported=reported,
            billing=facts.billing,
            estimate=policy.estimate if high else None,
            note=note,
        )

    if reported is not None:
        note = "the harness logged no per-call usage; its own figure is counted"
        return plain("reported", reported, reported, note, high=False)
    if not policy.priced:
        note = "this harness reports no usage and names no model: its cost is not measured"
        return plain("unmeasured", None, _ZERO, note, high=False)
    if policy.allow_unpriced:
        return plain("unpriced", None, _ZERO, "allowed unpriced: counted $0", high=False)
    if facts.ended == "did_not_work":
        return plain("none", _ZERO, _ZERO, "the run never reached a model", high=False)
    what = _estimate_words(policy)
    if facts.ended == "cut_off":
        note = f"cut off without a usage record: charged the high estimate, {what}"
        return plain("estimated", policy.high, policy.high, note, high=True)
    note = f"the harness logged no usage: charged the high estimate, {what}"
    return plain("unmeasured", None, policy.high, note, high=True)


def _from_calls(
    facts: RunFacts, policy: ChargePolicy, pricing: Pricing, reported: Decimal | None
) -> Charge:
    partial = facts.ended == "cut_off"
    partial_note = "cut off: priced from the calls it logged before that" if partial else None
    if pricing.complete:
        ours = pricing.priced_total
        notes = [partial_note]
        if facts.billing == "subscription":
            notes.append("billed to a subscription: this is the API-equivalent cost")
        # A model we price at zero (local, scripted) leaves nothing to reconcile: the harness's
        # figure is then its own list price of some model id, not what the run cost.
        free = bool(pricing.records) and all(record.free for record in pricing.records)
        reconciliation = None if partial or free else reconcile(ours, reported)
        if reconciliation is not None and reconciliation.flagged:
            notes.append(
                f"the harness reported ${to_usd(reported or _ZERO):.4f}, ours is "
                f"${to_usd(ours):.4f}: more than 2% apart"
            )
        return Charge(
            "computed",
            ours,
            ours,
            reported=reported,
            pricing=pricing,
            partial=partial,
            billing=facts.billing,
            reconciliation=reconciliation,
            note="; ".join(note for note in notes if note) or None,
        )
    missing = ", ".join(pricing.unpriced_models)
    priced_part = pricing.priced_total
    if policy.allow_unpriced:
        note = (
            f"no price for {missing}; allowed unpriced: counted "
            f"${to_usd(priced_part):.4f}, the priced calls only"
        )
        usd: Decimal | None = None
        source: ChargeSource = "unpriced"
        charged = priced_part
        estimate = None
    elif reported is not None:
        note = f"no price for {missing}; the harness's own figure is counted"
        source, usd, charged, estimate = "reported", reported, max(reported, priced_part), None
    else:
        note = f"no price for {missing}: charged the high estimate, {_estimate_words(policy)}"
        source, usd, charged = "unpriced", None, max(priced_part, policy.high)
        estimate = policy.estimate
    return Charge(
        source,
        usd,
        charged,
        reported=reported,
        pricing=pricing,
        partial=partial,
        billing=facts.billing,
        estimate=estimate,
        note=note,
    )


def _estimate_words(policy: ChargePolicy) -> str:
    if policy.estimate is None:
        return "$0 (no estimate: no priced model)"
    return f"${policy.estimate.high_usd:.4f} ({policy.estimate.describe()})"
