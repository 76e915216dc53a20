"""The ``cost`` of each trial's result: at start (in case it is interrupted), skipped, or run.

The trial runner calls these; the rules themselves live in :mod:`harnessdrive.accounting.charge`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path

from harnessdrive.accounting import CallCost, PriceBook, Pricing, to_usd
from harnessdrive.accounting.charge import Charge, RunEnd, RunFacts, charge_run
from harnessdrive.accounting.cost_range import CostRange
from harnessdrive.accounting.plan_pricing import PlanPricing, VariantPricing
from harnessdrive.harnesses.base import AgentRun, Harness, ModelPlan
from harnessdrive.store.atomic import write_atomic
from harnessdrive.store.result_cost import CostEstimate, ModelSpend, PriceUsed
from harnessdrive.store.results import Cost, Status
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript import ModelCall, Usage

NO_MODEL = Cost(usd=0.0, source="none")
"""The cost of a trial whose agent used no model or never started."""


@dataclass
class Costing:
    """Prices trials for one run. Without a plan's pricing, nothing is priced (scripted runs)."""

    pricing: PlanPricing | None = None
    book: PriceBook = field(default_factory=PriceBook)

    def variant(self, variant: VariantSpec, harness: Harness) -> VariantPricing:
        found = self.pricing.for_variant(variant) if self.pricing else None
        return found or VariantPricing(variant=variant, info=harness.info(), plan=ModelPlan())

    def if_interrupted(self, variant: VariantSpec, harness: Harness) -> Cost:
        """The cost recorded if the trial never finishes: the high estimate of a killed run."""
        pricing = self.variant(variant, harness)
        if not pricing.uses_model:
            return NO_MODEL
        if not pricing.priced:
            return Cost(source="unmeasured", note="interrupted; this harness is not measured")
        charging = pricing.charging
        if pricing.allow_unpriced or charging is None:
            return Cost(source="unpriced", note="interrupted; allowed unpriced: $0")
        high = to_usd(charging.high)
        return Cost(
            usd=high,
            source="estimated",
            charged_usd=high,
            estimate=_estimate(charging),
            note=(
                "interrupted without a usage record: charged the high estimate, "
                f"${high:.4f} ({charging.describe()})"
            ),
        )

    def of_run(
        self,
        variant: VariantSpec,
        harness: Harness,
        agent: AgentRun,
        status: Status,
        started: str,
        ledger: Path | None = None,
    ) -> Cost:
        """What a run cost, priced on the UTC day it started; writes the per-call ledger."""
        pricing = self.variant(variant, harness)
        if not pricing.uses_model:
            return NO_MODEL
        transcript = agent.transcript
        facts = RunFacts(
            calls=transcript.calls,
            reported_usd=transcript.reported_cost_usd,
            ended=_ended(agent, status),
            billing=transcript.billing or pricing.plan.billing,
        )
        on = date.fromisoformat(started[:10])
        charge = charge_run(facts, pricing.policy, self.book, on=on)
        if ledger is not None and charge.pricing is not None:
            write_atomic(ledger, charge.pricing.model_dump_json(indent=2) + "\n")
        return with_proxy_count(to_cost(charge, on, transcript.calls), agent)


USAGE_TOLERANCE = 0.02
"""How far apart (a share of the tokens) the proxy's count and the CLI's log may be."""


def with_proxy_count(cost: Cost, agent: AgentRun) -> Cost:
    """``cost`` with the proxy's token count beside it, flagged when the CLI's log disagrees."""
    traffic = agent.traffic
    if traffic is None:
        return cost
    seen, logged = traffic.usage, agent.transcript.usage
    apart = sum(
        abs(getattr(seen, tier) - getattr(logged, tier))
        for tier in ("input", "cache_read", "cache_write", "output")
    )
    mismatch = apart > USAGE_TOLERANCE * max(seen.total, logged.total)
    update: dict[str, object] = {"proxy_usage": seen, "usage_mismatch": mismatch}
    if mismatch:
        note = f"the proxy counted {seen.total:,} tokens, the CLI's log {logged.total:,}" + (
            f" ({traffic.unmetered} answers without usage)" if traffic.unmetered else ""
        )
        update["note"] = f"{cost.note}; {note}" if cost.note else note
    return cost.model_copy(update=update)


def _ended(agent: AgentRun, status: Status) -> RunEnd:
    if agent.timed_out or agent.stopped or status in ("timeout", "interrupted"):
        return "cut_off"
    if status == "could_not_run":
        return "did_not_work"
    return "finished"


def to_cost(charge: Charge, on: date, calls: Sequence[ModelCall] = ()) -> Cost:
    """A charge as ``result.json`` records it (``calls``: the calls it priced, for tokens)."""
    pricing = charge.pricing
    reconciliation = charge.reconciliation
    return Cost(
        usd=None if charge.usd is None else to_usd(charge.usd),
        source=charge.source,
        charged_usd=to_usd(charge.charged),
        reported_usd=None if charge.reported is None else to_usd(charge.reported),
        priced_on=on if pricing is not None else None,
        prices=_prices_used(pricing) if pricing is not None else (),
        models=_by_model(pricing, calls) if pricing is not None else (),
        long_context_calls=pricing.long_context_calls if pricing is not None else 0,
        unpriced_models=pricing.unpriced_models if pricing is not None else (),
        billing=charge.billing,
        partial=charge.partial,
        reported_difference=(
            round(float(reconciliation.difference), 6)
            if reconciliation is not None and reconciliation.difference is not None
            else None
        ),
        mismatch=reconciliation.flagged if reconciliation is not None else False,
        estimate=_estimate(charge.estimate) if charge.estimate is not None else None,
        note=charge.note,
    )


def _estimate(estimate: CostRange) -> CostEstimate:
    return CostEstimate(
        low_usd=estimate.low_usd,
        high_usd=estimate.high_usd,
        basis=estimate.basis,
        detail=estimate.describe(),
    )


def _prices_used(pricing: Pricing) -> tuple[PriceUsed, ...]:
    return tuple(
        PriceUsed(
            record=record.id,
            valid_from=record.valid_from,
            valid_to=record.valid_to,
            source=record.source.label,
        )
        for record in pricing.records
    )


def _by_model(pricing: Pricing, calls: Sequence[ModelCall]) -> tuple[ModelSpend, ...]:
    """Calls, tokens and exact cost summed per (model, provider, record), then rounded."""
    groups: dict[tuple[str, str | None, str | None], list[CallCost]] = defaultdict(list)
    for priced in pricing.calls:
        groups[(priced.model, priced.provider, priced.record_id)].append(priced)
    spends = []
    for (model, provider, record), group in groups.items():
        usage = sum((calls[c.index].usage for c in group if c.index < len(calls)), Usage())
        costs = [c.cost.total for c in group if c.cost is not None]
        spends.append(
            ModelSpend(
                model=model,
                provider=provider,
                record=record,
                calls=len(group),
                long_context_calls=sum(c.long_context for c in group),
                usage=usage,
                usd=to_usd(sum(costs, Decimal(0))) if costs else None,
            )
        )
    return tuple(spends)
