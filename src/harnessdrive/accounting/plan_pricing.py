"""Before any trial starts: which models each variant will use, their prices, a per-trial range.

A variant is *priced* when its harness spends tokens and can name its models (it implements
``plan_models``, or the variant pins a model). A priced variant needs a price record for every
model it names, and a model at all (unless it is allowed unpriced), and a spend cap. A harness
that spends tokens but has no way to name a model (the ``command`` harness without a pinned
model) is not measured.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from decimal import Decimal

from harnessdrive.accounting import PriceBook, PriceRecord
from harnessdrive.accounting.charge import ChargePolicy, exact
from harnessdrive.accounting.cost_range import CostRange, assumed_range, observed_range
from harnessdrive.errors import BudgetError, Setting, UserError, did_you_mean
from harnessdrive.harnesses.base import (
    Harness,
    HarnessInfo,
    ModelPlan,
    PlansModels,
    planned_models,
)
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.models import VariantSpec


@dataclass(frozen=True)
class ModelPrice:
    """One planned model and the record in force for it, or why there is none."""

    model: str
    provider: str | None
    record: PriceRecord | None
    reason: str | None = None


@dataclass(frozen=True)
class VariantPricing:
    variant: VariantSpec
    info: HarnessInfo
    plan: ModelPlan
    prices: tuple[ModelPrice, ...] = ()
    allow_unpriced: bool = False
    names_models: bool = False
    """The harness implements ``plan_models`` or the variant pins a model."""
    estimate: CostRange | None = None
    """Per trial: from history when there is any, else from the token assumptions."""
    assumption: CostRange | None = None
    """Per trial, from the token assumptions alone."""

    @property
    def uses_model(self) -> bool:
        return self.info.uses_model

    @property
    def priced(self) -> bool:
        return self.info.uses_model and (self.names_models or bool(self.plan.models))

    @property
    def free(self) -> bool:
        """Every planned model has a price of zero (a local or scripted model): no cap needed."""
        return bool(self.prices) and all(
            p.record is not None and p.record.free for p in self.prices
        )

    @property
    def unpriced(self) -> tuple[ModelPrice, ...]:
        return tuple(price for price in self.prices if price.record is None)

    @property
    def records(self) -> tuple[PriceRecord, ...]:
        unique = {p.record.id: p.record for p in self.prices if p.record is not None}
        return tuple(unique[key] for key in sorted(unique))

    @property
    def charging(self) -> CostRange | None:
        """The range whose high end the cap reserves for a running trial and charges a trial
        cut off without a usage record: history or assumption, whichever reaches higher, so a
        few cheap past trials never shrink it below the assumed long run."""
        ranges = [r for r in (self.estimate, self.assumption) if r is not None]
        return max(ranges, key=lambda r: r.high) if ranges else None

    @property
    def policy(self) -> ChargePolicy:
        return ChargePolicy(
            priced=self.priced, allow_unpriced=self.allow_unpriced, estimate=self.charging
        )

    @property
    def high(self) -> Decimal:
        """What a running trial reserves under the cap."""
        charging = self.charging
        return charging.high if charging is not None else Decimal(0)

    @property
    def unpinned(self) -> bool:
        """Priced, but which model it will use is unknown until one is pinned."""
        return self.priced and not self.plan.models

    @property
    def pin(self) -> Setting:
        """The setting that pins this variant's model."""
        return Setting("models", f"{self.variant.harness}=MODEL")

    def refusal(self) -> str | None:
        """Why this variant cannot run unless it is allowed unpriced, or None."""
        if not self.uses_model or self.allow_unpriced:
            return None
        if self.unpinned:
            return (
                f"{self.variant.label}: cannot tell which model it will use; pin one for "
                f"{self.variant.harness} or set it in the agent CLI's own config"
            )
        problems = [price.reason or f"no price for {price.model!r}" for price in self.unpriced]
        if not problems:
            return None
        return f"{self.variant.label}: " + "; ".join(problems)


@dataclass(frozen=True)
class PlanPricing:
    """Every variant of a run, priced on one day."""

    on: date
    variants: Mapping[str, VariantPricing]
    """By variant label."""

    def for_variant(self, variant: VariantSpec) -> VariantPricing | None:
        return self.variants.get(variant.label)

    @property
    def priced(self) -> tuple[VariantPricing, ...]:
        return tuple(v for v in self.variants.values() if v.priced)

    def check(self, max_usd: float | None) -> None:
        """Refuse, before anything runs, a model without a price and a missing spend cap."""
        refused = {
            v.variant.label: (v, reason) for v in self.variants.values() if (reason := v.refusal())
        }
        # A CLI that is not there cannot say which model it would use: say what is missing.
        missing = [v for v, _ in refused.values() if not v.info.installed]
        if missing:
            raise UserError(
                "; ".join(f"{v.variant.label} is not installed: {v.info.found}" for v in missing)
            )
        refusals = [reason for _, reason in refused.values()]
        if refusals:
            names = ", ".join(refused)
            pins = [v.pin for v in self.variants.values() if v.unpinned and not v.allow_unpriced]
            raise UserError(
                "cannot price " + "; ".join(refusals) + ". Fix: add a [[price]] row for each "
                "model to a TOML price file (docs/pricing.md), or run it at $0, labelled "
                f"unpriced, by allowing {names} unpriced",
                settings=(
                    *pins,
                    Setting("price_files", "FILE"),
                    Setting("allow_unpriced", names.replace(", ", ",")),
                ),
            )
        if max_usd is not None and max_usd <= 0:
            raise BudgetError(
                f"the spend cap must be more than $0, not {max_usd:g}",
                settings=(Setting("max_usd", "USD"),),
            )
        spenders = [v.variant.label for v in self.priced if not v.free]
        if spenders and max_usd is None:
            verb = "spends" if len(spenders) == 1 else "spend"
            raise BudgetError(
                f"a spend cap is required: {', '.join(spenders)} {verb} money on model tokens; "
                "estimate what the run may cost, then set the cap",
                settings=(Setting("max_usd", "USD"),),
            )


def today() -> date:
    """The UTC day: prices are chosen by the UTC day a trial starts."""
    return datetime.now(UTC).date()


def price_variants(
    variants: Sequence[VariantSpec],
    harnesses: Mapping[str, Harness],
    book: PriceBook,
    *,
    on: date,
    allow_unpriced: Collection[str] = (),
    history: Iterable[TrialResult] = (),
    infos: Mapping[str, HarnessInfo] | None = None,
) -> PlanPricing:
    """Look up every planned model of every variant and estimate one trial of each.

    ``infos``: the harnesses' info where the caller has it, so a forecast need not ask each
    CLI its version (which starts it)."""
    allowed = set(allow_unpriced)
    known = {v.label for v in variants} | {v.harness for v in variants}
    stray = sorted(allowed - known)
    if stray:
        raise UserError(
            f"allowed unpriced, but no harness of this run: {', '.join(stray)}"
            f"{did_you_mean(stray[0], known)}",
            settings=(Setting("allow_unpriced"),),
        )
    past = list(history)
    priced: dict[str, VariantPricing] = {}
    for variant in variants:
        harness = harnesses[variant.harness]
        info = infos[variant.harness] if infos and variant.harness in infos else harness.info()
        plan = planned_models(harness, variant) if info.uses_model else ModelPlan()
        prices = tuple(_price(book, model.model, model.provider, on) for model in plan.models)
        pricing = VariantPricing(
            variant=variant,
            info=info,
            plan=plan,
            prices=prices,
            allow_unpriced=variant.label in allowed or variant.harness in allowed,
            names_models=isinstance(harness, PlansModels) or variant.model is not None,
        )
        assumption = assumed_range(pricing.records) if pricing.priced else None
        observed = _history_range(pricing, past) if pricing.priced else None
        priced[variant.label] = replace(
            pricing, assumption=assumption, estimate=observed or assumption
        )
    return PlanPricing(on=on, variants=priced)


def _price(book: PriceBook, model: str, provider: str | None, on: date) -> ModelPrice:
    found = book.resolve(model, provider, on=on)
    return ModelPrice(model, provider, found.record, found.reason)


def model_names(pricing: VariantPricing) -> set[str]:
    """Names a past trial's model may carry to count as the same model."""
    names = {model.model.lower() for model in pricing.plan.models}
    if pricing.variant.model:
        names.add(pricing.variant.model.lower())
    return names


def _round_models(result: TrialResult) -> list[str | None]:
    """The model each round's agent reported: a trial of several rounds may name it in any."""
    return [record.agent.model for record in result.rounds]


def _history_range(pricing: VariantPricing, past: Sequence[TrialResult]) -> CostRange | None:
    names = model_names(pricing)
    costs = [
        exact(result.cost.usd)
        for result in past
        if result.harness == pricing.variant.harness
        and result.cost.usd is not None
        and result.cost.measured
        and result.cost.source != "none"
        and names & {m.lower() for m in (result.variant.model, *_round_models(result)) if m}
    ]
    return observed_range(costs)
