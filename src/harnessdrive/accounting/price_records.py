"""Dated price records: what one model cost per million tokens during a span of days.

A :class:`PriceRecord` holds USD per million tokens for the five disjoint token tiers of
:class:`harnessdrive.transcript.Usage` (uncached input, cache read, 5-minute cache write, 1-hour
cache write, output), optionally a second set of rates for calls whose prompt is longer than a
threshold, and the half-open span of days ``[valid_from, valid_to)`` in which it applies.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainSerializer, model_validator


def plain_decimal(value: Decimal) -> str:
    """The shortest plain decimal string: ``3.75``, ``10``, ``0.0028`` (no exponent, no trailing
    zeros)."""
    text = format(value.normalize(), "f")
    return "0" if text in {"-0", "0"} else text


ExactUsd = Annotated[Decimal, PlainSerializer(plain_decimal, return_type=str, when_used="json")]
"""An exact amount of US dollars; JSON shows it as a plain decimal string."""


def _finite_non_negative(value: Decimal) -> Decimal:
    if not value.is_finite() or value < 0:
        raise ValueError(f"a rate must be a finite number >= 0, got {value}")
    return value


UsdPerMtok = Annotated[
    Decimal,
    AfterValidator(_finite_non_negative),
    PlainSerializer(plain_decimal, return_type=str, when_used="json"),
]
"""US dollars per million tokens."""


def _normalised_id(value: str) -> str:
    cleaned = value.strip().lower()
    if not cleaned:
        raise ValueError("must not be empty")
    return cleaned


ModelId = Annotated[str, AfterValidator(_normalised_id)]
"""A model id as stored: stripped and lower-case."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Rates(_Model):
    """USD per million tokens for each token tier."""

    input: UsdPerMtok
    """Uncached input tokens."""
    cache_read: UsdPerMtok
    """Input tokens read from the prompt cache."""
    cache_write_5m: UsdPerMtok
    """Input tokens written to the cache with the default (5-minute) lifetime."""
    cache_write_1h: UsdPerMtok
    """Input tokens written to the cache with a one-hour lifetime."""
    output: UsdPerMtok
    """Output tokens, reasoning included."""


class PriceSource(_Model):
    """Where a record came from: a price-data package, or a user's override file."""

    name: str
    """Package name (``genai-prices``) or ``user config``."""
    version: str | None = None
    """Package version, for records generated from a package."""
    snapshot_date: date | None = None
    """The day the package version was pinned, for generated records."""
    file: str | None = None
    """The override file, for user records."""
    row: int | None = None
    """The ``[[price]]`` row of that file, counted from 1."""

    @property
    def label(self) -> str:
        parts = [self.name]
        if self.version:
            parts.append(self.version)
        if self.snapshot_date:
            parts.append(f"(snapshot {self.snapshot_date.isoformat()})")
        if self.file:
            parts.append(self.file)
        if self.row is not None:
            parts.append(f"row {self.row}")
        return " ".join(parts)


class PriceRecord(_Model):
    """The price of one model at one provider during ``[valid_from, valid_to)``."""

    provider: ModelId | None
    """Who bills the model (``anthropic``, ``openai``, ``google``, ...). ``None`` only in user
    records: such a record applies whatever provider a call names."""
    model: ModelId
    """The model's canonical id, lower-case."""
    aliases: tuple[ModelId, ...] = ()
    """Other exact ids the provider accepts for the same model."""
    rates: Rates
    long_context_threshold: int | None = Field(default=None, gt=0)
    """Prompt tokens (input + cache read + cache write) above which a call is billed entirely at
    ``long_context_rates``."""
    long_context_rates: Rates | None = None
    valid_from: date | None = None
    """First day the record applies; ``None``: since always."""
    valid_to: date | None = None
    """First day the record no longer applies; ``None``: still in force."""
    source: PriceSource

    @model_validator(mode="after")
    def _consistent(self) -> PriceRecord:
        if (self.long_context_threshold is None) != (self.long_context_rates is None):
            raise ValueError(
                "long_context_threshold and long_context_rates go together: give both or neither"
            )
        if (
            self.valid_from is not None
            and self.valid_to is not None
            and self.valid_from >= self.valid_to
        ):
            raise ValueError(
                f"valid_from {self.valid_from} must be before valid_to {self.valid_to}"
            )
        return self

    @property
    def free(self) -> bool:
        """Every tier costs nothing (a local or scripted model)."""
        tiers = [self.rates, *([self.long_context_rates] if self.long_context_rates else [])]
        return all(value == 0 for rates in tiers for value in rates.model_dump().values())

    @property
    def id(self) -> str:
        """A readable key: ``provider/model@valid_from`` (``*`` for any provider)."""
        start = self.valid_from.isoformat() if self.valid_from else "origin"
        return f"{self.provider or '*'}/{self.model}@{start}"

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical id followed by the aliases."""
        return (self.model, *self.aliases)

    def in_force(self, on: date) -> bool:
        """Whether the record applies on day ``on``."""
        if self.valid_from is not None and on < self.valid_from:
            return False
        return self.valid_to is None or on < self.valid_to

    def overlaps(self, other: PriceRecord) -> bool:
        """Whether the two validity spans share at least one day."""
        starts_before_other_ends = (
            self.valid_from is None or other.valid_to is None or self.valid_from < other.valid_to
        )
        ends_after_other_starts = (
            self.valid_to is None or other.valid_from is None or other.valid_from < self.valid_to
        )
        return starts_before_other_ends and ends_after_other_starts

    def rates_for(self, prompt_tokens: int) -> tuple[Rates, bool]:
        """The rates that bill a call with this many prompt tokens, and whether they are the
        long-context ones."""
        if (
            self.long_context_threshold is not None
            and self.long_context_rates is not None
            and prompt_tokens > self.long_context_threshold
        ):
            return self.long_context_rates, True
        return self.rates, False
