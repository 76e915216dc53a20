"""The ``cost`` of a trial in ``result.json``: what it cost, how we know, and what it counted.

Documented field by field in docs/pricing.md ("The cost in result.json").
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict

from harnessdrive.transcript.models import Usage

CostSource = Literal["computed", "reported", "estimated", "unmeasured", "unpriced", "none"]
MEASURED_SOURCES: tuple[CostSource, ...] = ("computed", "reported", "none")
"""Sources whose ``usd`` is a measurement (a partial one excepted, see ``Cost.measured``)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PriceUsed(_Model):
    """A price record that priced some of the trial's calls."""

    record: str
    """The record's id, ``provider/model@valid_from``."""
    valid_from: date | None = None
    valid_to: date | None = None
    """The days the record applies: ``[valid_from, valid_to)``; empty means open."""
    source: str
    """Where it came from: ``genai-prices 0.2.3 (snapshot 2026-11-29)`` or ``user config FILE
    row N``."""


class ModelSpend(_Model):
    """The calls of one model in the trial and what they cost."""

    model: str
    provider: str | None = None
    record: str | None = None
    """The record that priced them; ``None`` when the model is unpriced."""
    calls: int
    long_context_calls: int = 0
    usage: Usage
    usd: float | None = None


class CostEstimate(_Model):
    """The range a trial of this variant was expected to cost, when an estimate was charged."""

    low_usd: float
    high_usd: float
    basis: Literal["history", "assumption"]
    """``history``: past trials of the same harness and model in this results folder;
    ``assumption``: the documented token counts of a short and a long run."""
    detail: str = ""


class Cost(_Model):
    usd: float | None = None
    """What the trial cost, when known (for ``estimated``: the estimate charged)."""
    source: CostSource = "unmeasured"
    """computed (tokens x dated price), reported (the harness's own figure), estimated (a run cut
    off without a usage record), unmeasured (no usage record), unpriced (a model without a
    price), none (no model was used)."""
    charged_usd: float = 0.0
    """What counts toward the spend cap (an estimate when the real cost is unknown)."""
    reported_usd: float | None = None
    """The harness's own figure, kept beside ours."""
    priced_on: date | None = None
    """The day whose prices were used: the UTC day the trial started."""
    prices: tuple[PriceUsed, ...] = ()
    """Every price record used."""
    models: tuple[ModelSpend, ...] = ()
    """Calls, tokens and cost per model (a main model and its helpers each at their own rate)."""
    long_context_calls: int = 0
    """Calls billed at long-context rates."""
    unpriced_models: tuple[str, ...] = ()
    billing: Literal["api", "subscription"] | None = None
    """``subscription``: the run was paid by a plan login; ``usd`` is the API-equivalent cost."""
    partial: bool = False
    """The run was cut off: ``usd`` prices only the calls it logged before that."""
    reported_difference: float | None = None
    """(ours − the harness's) ÷ the harness's, when both exist and theirs is not zero."""
    mismatch: bool = False
    """Ours and the harness's figure differ by more than 2%."""
    estimate: CostEstimate | None = None
    """The range behind an estimated charge."""
    proxy_usage: Usage | None = None
    """Tokens over every model answer harnessdrive's proxy forwarded: a count the agent cannot
    touch, beside the CLI's log (None when the calls did not go through the proxy)."""
    usage_mismatch: bool = False
    """The proxy's count and the CLI's log differ by more than 2% of the tokens."""
    note: str | None = None
    """Why the cost is what it is, in a sentence, whenever it is not a plain computation."""

    @property
    def measured(self) -> bool:
        """Whether ``usd`` is a full measurement (scoreboards count the others apart)."""
        return self.source in MEASURED_SOURCES and not self.partial and self.usd is not None
