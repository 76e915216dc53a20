"""What a try lost with its worker cost: the proxy's relayed calls, or the high estimate.

A try whose worker process or node died never hands back its CLI's log. The calls its model
proxy recorded were relayed to the driver as they happened (executors/ray_relay.py); they are
priced like any run cut off mid-way. Only when nothing was relayed (the harness does not go
through the proxy, or the worker died before any call) is the variant's high estimate charged.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from harnessdrive.accounting.charge import RunFacts, charge_run
from harnessdrive.accounting.trial_cost import Costing, to_cost
from harnessdrive.harnesses.base import Harness
from harnessdrive.proxy.traffic import ProxiedCall
from harnessdrive.store.results import Cost
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript import ModelCall


def lost_try_cost(
    costing: Costing,
    variant: VariantSpec,
    harness: Harness,
    calls: Sequence[ProxiedCall],
    started: str,
) -> Cost:
    """The charge of a lost try that made ``calls`` (as its proxy saw them)."""
    metered = [
        ModelCall(model=call.model or variant.model or "", usage=call.usage)
        for call in calls
        if call.generation and call.usage is not None
    ]
    pricing = costing.variant(variant, harness)
    if not metered or not pricing.uses_model:
        return costing.if_interrupted(variant, harness)
    on = date.fromisoformat(started[:10])
    facts = RunFacts(
        calls=metered, reported_usd=None, ended="cut_off", billing=pricing.plan.billing
    )
    cost = to_cost(charge_run(facts, pricing.policy, costing.book, on=on), on, metered)
    note = f"a try lost with its worker: {len(metered)} call(s) counted by the model proxy"
    return cost.model_copy(update={"note": f"{cost.note}; {note}" if cost.note else note})
