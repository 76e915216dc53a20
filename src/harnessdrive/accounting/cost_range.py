"""What one trial may cost before it runs: a low–high range in US dollars.

Two bases, the first that applies:

- **history**: the measured costs of past trials of the same harness and model (lowest to
  highest);
- **assumption**: a short run on the cheapest model the harness will use, up to a long run on the
  dearest one. The token counts are assumptions, not measurements:

  ===== ======= ========== =========== ====== =========
  run   input   cache read cache write output total
  ===== ======= ========== =========== ====== =========
  short  20,000    150,000      20,000  4,000   194,000
  long  150,000  3,000,000     150,000 50,000 3,350,000
  ===== ======= ========== =========== ====== =========

  Each is priced at the model's normal rates (a long run is many calls, each below a long-context
  threshold), cache writes at the 5-minute rate.

The spend cap reserves for a running trial, and charges a trial cut off without a usage record,
the higher of the two high ends, so a few cheap past trials never lower it below the assumed long
run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Literal

from harnessdrive.accounting.call_cost import tier_costs, to_usd
from harnessdrive.accounting.price_records import PriceRecord
from harnessdrive.transcript import Usage

SHORT_RUN = Usage(input=20_000, cache_read=150_000, cache_write=20_000, output=4_000)
"""Tokens of a short agent run: the low end of an assumed estimate (194,000 tokens)."""
LONG_RUN = Usage(input=150_000, cache_read=3_000_000, cache_write=150_000, output=50_000)
"""Tokens of a long agent run: the high end of an assumed estimate (3,350,000 tokens)."""

Basis = Literal["history", "assumption"]


@dataclass(frozen=True)
class CostRange:
    """What one trial is expected to cost, lowest to highest, and on what grounds."""

    low: Decimal
    high: Decimal
    basis: Basis
    samples: int = 0
    """How many past trials a ``history`` range comes from."""
    low_record: str | None = None
    """For an ``assumption``: the record that prices the low end (the cheapest model)."""
    high_record: str | None = None
    """For an ``assumption``: the record that prices the high end (the dearest model)."""
    effort: tuple[int, int] | None = None
    """For an ``assumption`` narrowed by :func:`effort_window`: the rung (from 0) and how many
    rungs its harness's ladder has."""

    @property
    def low_usd(self) -> float:
        return to_usd(self.low)

    @property
    def high_usd(self) -> float:
        return to_usd(self.high)

    def times(self, trials: int) -> tuple[Decimal, Decimal]:
        """The range of ``trials`` such trials together."""
        return self.low * trials, self.high * trials

    def describe(self) -> str:
        """One phrase: where the range comes from."""
        if self.basis == "history":
            noun = "trial" if self.samples == 1 else "trials"
            return f"from {self.samples} past {noun} of this harness and model"
        if self.effort is not None:
            rung, rungs = self.effort
            return (
                f"assumed, narrowed to effort rung {rung + 1} of {rungs} of the "
                f"{SHORT_RUN.total:,}-to-{LONG_RUN.total:,}-token span"
            )
        if self.low_record == self.high_record:
            return f"assumed {SHORT_RUN.total:,} to {LONG_RUN.total:,} tokens on {self.high_record}"
        return (
            f"assumed {SHORT_RUN.total:,} tokens on {self.low_record} to "
            f"{LONG_RUN.total:,} tokens on {self.high_record}"
        )


def run_cost(usage: Usage, record: PriceRecord) -> Decimal:
    """Exact cost of ``usage`` at the record's normal rates."""
    return tier_costs(usage, record.rates).total


def assumed_range(records: Iterable[PriceRecord]) -> CostRange | None:
    """A short run on the cheapest record to a long run on the dearest; None without records."""
    candidates = list(records)
    if not candidates:
        return None
    cheapest = min(candidates, key=lambda record: (run_cost(SHORT_RUN, record), record.id))
    dearest = max(candidates, key=lambda record: (run_cost(LONG_RUN, record), record.id))
    return CostRange(
        low=run_cost(SHORT_RUN, cheapest),
        high=run_cost(LONG_RUN, dearest),
        basis="assumption",
        low_record=cheapest.id,
        high_record=dearest.id,
    )


def observed_range(costs: Sequence[Decimal]) -> CostRange | None:
    """The lowest to the highest of past measured costs; None without any."""
    if not costs:
        return None
    return CostRange(low=min(costs), high=max(costs), basis="history", samples=len(costs))


def effort_window(full: CostRange, rung: int, rungs: int) -> CostRange:
    """An assumed range narrowed to an effort's place on its harness's ladder, for a forecast.

    With no run of that effort yet, the short-to-long span is split on a log scale into
    overlapping windows, one per rung: the lowest rung takes the bottom two ``rungs + 1``-ths of
    the span, the highest the top two. It is still an assumption (higher effort is taken to mean
    longer runs), only narrower; the spend cap keeps reserving the whole span."""
    if full.basis != "assumption" or rungs < 2 or full.low <= 0 or not 0 <= rung < rungs:
        return full
    ratio = full.high / full.low
    parts = Decimal(rungs + 1)
    return replace(
        full,
        low=full.low * ratio ** (Decimal(rung) / parts),
        high=full.low * ratio ** (Decimal(rung + 2) / parts),
        effort=(rung, rungs),
    )
