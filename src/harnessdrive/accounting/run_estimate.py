"""What a run would cost before it runs: per variant, per trial and in total, as a low–high range.

Each range comes from this results folder's past trials of the same harness and model when there
are any, else from the documented token assumptions (:mod:`harnessdrive.accounting.cost_range`).
Trials already recorded are not run again, so only the rest are counted in the total.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from datetime import date
from pathlib import Path
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from harnessdrive.accounting import PriceBook, to_usd
from harnessdrive.accounting.cost_range import LONG_RUN, SHORT_RUN
from harnessdrive.accounting.plan_pricing import VariantPricing, price_variants
from harnessdrive.errors import Setting
from harnessdrive.harnesses.base import Harness
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store, recorded_among
from harnessdrive.tasks.loading import Suite
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript import Usage

ESTIMATE_SCHEMA = "harnessdrive-estimate-1"


class EstimatedTrial(Protocol):
    """What the estimate reads of a planned trial."""

    @property
    def trial_id(self) -> str: ...

    @property
    def variant(self) -> VariantSpec: ...


TrialT = TypeVar("TrialT", bound=EstimatedTrial, covariant=True)
T = TypeVar("T", bound=EstimatedTrial)


class EstimatedPlan(Protocol[TrialT]):
    """What the estimate reads of a run's plan (the driver's ``Plan``)."""

    @property
    def suite(self) -> Suite: ...

    @property
    def variants(self) -> tuple[VariantSpec, ...]: ...

    @property
    def harnesses(self) -> Mapping[str, Harness]: ...

    @property
    def trials(self) -> tuple[TrialT, ...]: ...


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelPriceRow(_Model):
    model: str
    provider: str | None = None
    record: str | None = None
    """The record in force on the estimate's day, ``provider/model@valid_from``."""
    valid_from: date | None = None
    valid_to: date | None = None
    source: str | None = None
    """Where the record came from."""
    unpriced: str | None = None
    """Why there is no record."""


class VariantEstimate(_Model):
    variant: str
    harness: str
    installed: bool
    version: str | None = None
    uses_model: bool
    priced: bool
    """Spends tokens and names its model: needs prices and a spend cap."""
    models_from: str = ""
    """Where the harness got its model choice (a pinned model, a config file, ...)."""
    models: tuple[ModelPriceRow, ...] = ()
    allow_unpriced: bool = False
    trials: int
    to_run: int
    """Trials not yet recorded in the results folder."""
    per_trial_low_usd: float | None = None
    per_trial_high_usd: float | None = None
    total_low_usd: float | None = None
    total_high_usd: float | None = None
    basis: Literal["history", "assumption"] | None = None
    basis_detail: str = ""
    high_estimate_usd: float | None = None
    """What the spend cap reserves for a running trial and charges a trial cut off without a
    usage record: the higher of the history and the assumed long run."""
    problem: str | None = None
    """Why a run would refuse this variant, with the fix."""
    fix: tuple[Setting, ...] = ()
    """The settings that fix the problem (a front end names them its own way)."""


class Estimate(_Model):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: str = Field(default=ESTIMATE_SCHEMA, alias="schema")
    suite: str
    on: date
    """The day whose prices were used."""
    results: str
    spent_usd: float
    """Already counted toward the spend cap in this results folder."""
    total_low_usd: float
    total_high_usd: float
    left_out: tuple[str, ...] = ()
    """Variants whose cost cannot be estimated (no price): the totals do not include them."""
    short_run: Usage = SHORT_RUN
    """The tokens assumed for a short run (the low end without history)."""
    long_run: Usage = LONG_RUN
    """The tokens assumed for a long run (the high end without history)."""
    variants: tuple[VariantEstimate, ...]

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=2)


def build_estimate(
    plan: EstimatedPlan[T],
    book: PriceBook,
    results: Path,
    *,
    stands: Callable[[TrialResult | None, T], bool],
    on: date,
    allow_unpriced: Collection[str] = (),
) -> Estimate:
    """Price every variant of ``plan`` without running anything or writing to ``results``.

    ``stands`` tells whether a recorded result stands, so a run would not repeat its trial.
    """
    history: list[TrialResult] = []
    recorded: dict[str, TrialResult] = {}
    spent = 0.0
    if (results / "index.sqlite").is_file():
        store = Store(results)
        try:
            history = store.all_latest()
            spent = store.charged_total()
        finally:
            store.close()
        recorded = {result.trial_id: result for result in history}
    pricing = price_variants(
        plan.variants,
        plan.harnesses,
        book,
        on=on,
        allow_unpriced=allow_unpriced,
        history=history,
    )
    rows = []
    for variant in plan.variants:
        trials = [t for t in plan.trials if t.variant.label == variant.label]
        to_run = sum(not stands(recorded_among(recorded, t.trial_id), t) for t in trials)
        rows.append(_row(pricing.variants[variant.label], len(trials), to_run))
    return Estimate(
        suite=plan.suite.name,
        on=on,
        results=str(results),
        spent_usd=round(spent, 6),
        total_low_usd=round(sum(row.total_low_usd or 0.0 for row in rows), 6),
        total_high_usd=round(sum(row.total_high_usd or 0.0 for row in rows), 6),
        left_out=tuple(row.variant for row in rows if row.total_high_usd is None),
        variants=tuple(rows),
    )


def _row(pricing: VariantPricing, trials: int, to_run: int) -> VariantEstimate:
    info = pricing.info
    models = tuple(
        ModelPriceRow(
            model=price.model,
            provider=price.provider,
            record=price.record.id if price.record else None,
            valid_from=price.record.valid_from if price.record else None,
            valid_to=price.record.valid_to if price.record else None,
            source=price.record.source.label if price.record else None,
            unpriced=price.reason if price.record is None else None,
        )
        for price in pricing.prices
    )
    estimate = pricing.estimate
    refusal = pricing.refusal()
    problem = None
    fix: tuple[Setting, ...] = ()
    if refusal is not None:
        problem = (
            f"a run would refuse it: {refusal}; add a price row in a price file or allow "
            f"{pricing.variant.label} unpriced"
        )
        fix = (
            *((pricing.pin,) if pricing.unpinned else ()),
            Setting("price_files", "FILE"),
            Setting("allow_unpriced", pricing.variant.label),
        )
    elif info.uses_model and not pricing.priced:
        problem = "names no model, so its cost is not measured (pin one)"
        fix = (pricing.pin,)
    low, high = estimate.times(to_run) if estimate is not None else (None, None)
    zero = not info.uses_model
    return VariantEstimate(
        variant=pricing.variant.label,
        harness=pricing.variant.harness,
        installed=info.installed,
        version=info.version,
        uses_model=info.uses_model,
        priced=pricing.priced,
        models_from=pricing.plan.source,
        models=models,
        allow_unpriced=pricing.allow_unpriced,
        trials=trials,
        to_run=to_run,
        per_trial_low_usd=0.0 if zero else (estimate.low_usd if estimate else None),
        per_trial_high_usd=0.0 if zero else (estimate.high_usd if estimate else None),
        total_low_usd=0.0 if zero else (to_usd(low) if low is not None else None),
        total_high_usd=0.0 if zero else (to_usd(high) if high is not None else None),
        basis=estimate.basis if estimate else None,
        basis_detail=estimate.describe() if estimate else "",
        high_estimate_usd=to_usd(pricing.high) if pricing.priced else (0.0 if zero else None),
        problem=problem,
        fix=fix,
    )
