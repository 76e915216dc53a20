"""Cost of model calls: each call's tokens times the rates of that call's own model.

All arithmetic is exact (:class:`decimal.Decimal`, rates per million tokens divided by 10^6 without
rounding). Floats appear only in the ``*_usd`` properties, rounded half-up to six decimal places
(a millionth of a dollar); a total is the rounded exact sum, never a sum of rounded parts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from pydantic import BaseModel, ConfigDict

from harnessdrive.accounting.price_records import ExactUsd, PriceRecord, Rates
from harnessdrive.transcript import ModelCall, Usage

_PER_MTOK = Decimal(1_000_000)
_MICRO_USD = Decimal("0.000001")
_ZERO = Decimal(0)


def to_usd(amount: Decimal) -> float:
    """An exact amount as a float, rounded half-up to a millionth of a dollar."""
    return float(amount.quantize(_MICRO_USD, rounding=ROUND_HALF_UP))


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TierCosts(_Model):
    """Exact USD per token tier."""

    input: ExactUsd = _ZERO
    cache_read: ExactUsd = _ZERO
    cache_write_5m: ExactUsd = _ZERO
    cache_write_1h: ExactUsd = _ZERO
    output: ExactUsd = _ZERO

    @property
    def total(self) -> Decimal:
        return (
            self.input + self.cache_read + self.cache_write_5m + self.cache_write_1h + self.output
        )

    def __add__(self, other: TierCosts) -> TierCosts:
        return TierCosts(
            input=self.input + other.input,
            cache_read=self.cache_read + other.cache_read,
            cache_write_5m=self.cache_write_5m + other.cache_write_5m,
            cache_write_1h=self.cache_write_1h + other.cache_write_1h,
            output=self.output + other.output,
        )

    def usd(self) -> dict[str, float]:
        """Each tier as rounded float USD."""
        return {name: to_usd(value) for name, value in self.model_dump().items()}


def tier_costs(usage: Usage, rates: Rates) -> TierCosts:
    """Exact cost of one call's tokens at ``rates``.

    ``usage.cache_write`` holds every cache write; its ``cache_write_1h`` part is billed at the
    one-hour rate and the rest at the 5-minute rate. Reasoning is part of ``output`` and is not
    billed again.
    """
    counts = (usage.input, usage.cache_read, usage.cache_write, usage.cache_write_1h, usage.output)
    if any(count < 0 for count in counts):
        raise ValueError(f"negative token count in {usage!r}")
    if usage.cache_write_1h > usage.cache_write:
        raise ValueError(
            f"1-hour cache writes ({usage.cache_write_1h}) exceed all cache writes "
            f"({usage.cache_write}): the usage was normalised wrongly"
        )
    cache_write_5m = usage.cache_write - usage.cache_write_1h
    return TierCosts(
        input=usage.input * rates.input / _PER_MTOK,
        cache_read=usage.cache_read * rates.cache_read / _PER_MTOK,
        cache_write_5m=cache_write_5m * rates.cache_write_5m / _PER_MTOK,
        cache_write_1h=usage.cache_write_1h * rates.cache_write_1h / _PER_MTOK,
        output=usage.output * rates.output / _PER_MTOK,
    )


class CallCost(_Model):
    """One call, priced or not."""

    index: int
    """Position of the call in the list that was priced."""
    model: str
    """The model id as the call reported it."""
    provider: str | None
    record_id: str | None
    """The record that priced the call; ``None`` when it is unpriced."""
    long_context: bool = False
    """Whether the call was billed at the record's long-context rates."""
    cost: TierCosts | None = None

    @property
    def usd(self) -> float | None:
        return None if self.cost is None else to_usd(self.cost.total)


class UnpricedModel(_Model):
    """A model the price book could not price, and why."""

    model: str
    provider: str | None
    reason: str
    calls: int


class Pricing(_Model):
    """The cost of a list of calls on one day."""

    on: date
    """The day whose prices were used."""
    calls: tuple[CallCost, ...]
    by_tier: TierCosts
    """Exact USD per tier over the priced calls."""
    priced_total: ExactUsd
    """Exact USD over the priced calls."""
    records: tuple[PriceRecord, ...]
    """Every record used, sorted by id."""
    unpriced: tuple[UnpricedModel, ...] = ()
    long_context_calls: int = 0

    @property
    def complete(self) -> bool:
        """True when every call was priced."""
        return not self.unpriced

    @property
    def total_usd(self) -> float | None:
        """Total USD, or ``None`` when any call is unpriced: a partial sum is never a total."""
        return to_usd(self.priced_total) if self.complete else None

    @property
    def priced_usd(self) -> float:
        """USD over the priced calls only (for callers that allow unpriced models)."""
        return to_usd(self.priced_total)

    @property
    def unpriced_models(self) -> tuple[str, ...]:
        return tuple(sorted({entry.model for entry in self.unpriced}))


@dataclass(frozen=True)
class Lookup:
    """What the price book found for one (model, provider, day)."""

    record: PriceRecord | None
    reason: str | None = None
    """Why there is no record, when there is none."""


Resolver = Callable[[str, str | None], Lookup]


def price_calls(calls: Iterable[ModelCall], resolve: Resolver, on: date) -> Pricing:
    """Price each call with the record ``resolve`` finds for its own model and provider."""
    found: dict[tuple[str, str | None], Lookup] = {}
    priced: list[CallCost] = []
    used: dict[str, PriceRecord] = {}
    unpriced_calls: dict[tuple[str, str | None], int] = {}
    by_tier = TierCosts()
    long_context_calls = 0
    for index, call in enumerate(calls):
        key = (call.model, call.provider)
        if key not in found:
            found[key] = resolve(call.model, call.provider)
        record = found[key].record
        if record is None:
            unpriced_calls[key] = unpriced_calls.get(key, 0) + 1
            priced.append(
                CallCost(index=index, model=call.model, provider=call.provider, record_id=None)
            )
            continue
        rates, long_context = record.rates_for(call.usage.prompt_tokens)
        cost = tier_costs(call.usage, rates)
        by_tier = by_tier + cost
        long_context_calls += long_context
        used[record.id + "|" + record.source.label] = record
        priced.append(
            CallCost(
                index=index,
                model=call.model,
                provider=call.provider,
                record_id=record.id,
                long_context=long_context,
                cost=cost,
            )
        )
    unpriced = tuple(
        UnpricedModel(
            model=model,
            provider=provider,
            reason=found[(model, provider)].reason or "",
            calls=count,
        )
        for (model, provider), count in sorted(
            unpriced_calls.items(), key=lambda item: (item[0][0], item[0][1] or "")
        )
    )
    return Pricing(
        on=on,
        calls=tuple(priced),
        by_tier=by_tier,
        priced_total=by_tier.total,
        records=tuple(record for _, record in sorted(used.items())),
        unpriced=unpriced,
        long_context_calls=long_context_calls,
    )
