"""Per-trial estimates: the documented token assumptions, and ranges from past trials."""

from __future__ import annotations

from decimal import Decimal

from harnessdrive.accounting import PriceRecord, PriceSource, Rates
from harnessdrive.accounting.cost_range import (
    LONG_RUN,
    SHORT_RUN,
    assumed_range,
    observed_range,
)

SOURCE = PriceSource(name="test-data", version="1")


def record(model: str, input_: str, read: str, write: str, output: str) -> PriceRecord:
    values = [Decimal(v) for v in (input_, read, write, write, output)]
    rates = Rates(
        input=values[0],
        cache_read=values[1],
        cache_write_5m=values[2],
        cache_write_1h=values[3],
        output=values[4],
    )
    long_rates = Rates(**{k: v * 2 for k, v in rates.model_dump().items()})
    return PriceRecord(
        provider="p",
        model=model,
        rates=rates,
        long_context_threshold=200_000,
        long_context_rates=long_rates,
        source=SOURCE,
    )


CHEAP = record("cheap", "1", "0.1", "1.25", "5")
DEAR = record("dear", "5", "0.5", "6.25", "25")


def test_the_assumed_runs_are_the_documented_token_counts() -> None:
    assert SHORT_RUN.total == 194_000
    assert (SHORT_RUN.input, SHORT_RUN.cache_read, SHORT_RUN.cache_write, SHORT_RUN.output) == (
        20_000,
        150_000,
        20_000,
        4_000,
    )
    assert LONG_RUN.total == 3_350_000
    assert (LONG_RUN.input, LONG_RUN.cache_read, LONG_RUN.cache_write, LONG_RUN.output) == (
        150_000,
        3_000_000,
        150_000,
        50_000,
    )


def test_a_short_run_on_the_cheapest_model_to_a_long_run_on_the_dearest() -> None:
    found = assumed_range([DEAR, CHEAP])
    assert found is not None
    # short on cheap: 20k x 1 + 150k x 0.1 + 20k x 1.25 + 4k x 5 = $0.08
    assert found.low == Decimal("0.08")
    # long on dear: 150k x 5 + 3M x 0.5 + 150k x 6.25 + 50k x 25 = $4.4375, at the normal rates
    # although the long run's tokens add up past the long-context threshold
    assert found.high == Decimal("4.4375")
    assert (found.low_record, found.high_record) == ("p/cheap@origin", "p/dear@origin")
    assert found.basis == "assumption"
    assert found.times(3) == (Decimal("0.24"), Decimal("13.3125"))
    assert found.describe() == (
        "assumed 194,000 tokens on p/cheap@origin to 3,350,000 tokens on p/dear@origin"
    )


def test_one_model_is_both_ends_and_no_model_is_no_range() -> None:
    found = assumed_range([CHEAP])
    assert found is not None
    assert (found.low_usd, found.high_usd) == (0.08, 0.8875)
    assert found.describe() == "assumed 194,000 to 3,350,000 tokens on p/cheap@origin"
    assert assumed_range([]) is None


def test_past_costs_give_the_lowest_to_the_highest() -> None:
    found = observed_range([Decimal("0.3"), Decimal("0.12"), Decimal("0.41")])
    assert found is not None
    assert (found.low, found.high, found.samples, found.basis) == (
        Decimal("0.12"),
        Decimal("0.41"),
        3,
        "history",
    )
    assert found.describe() == "from 3 past trials of this harness and model"
    assert observed_range([]) is None
