"""Costs checked against hand computation, to the cent and below."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harnessdrive.accounting import (
    PriceBook,
    PriceRecord,
    PriceSource,
    Pricing,
    Rates,
    TierCosts,
    tier_costs,
    to_usd,
)
from harnessdrive.transcript import ModelCall, Usage

SOURCE = PriceSource(name="test-data", version="1")
DAY = date(2026, 6, 15)


def rates(input_: str, cache_read: str, write_5m: str, write_1h: str, output: str) -> Rates:
    return Rates(
        input=Decimal(input_),
        cache_read=Decimal(cache_read),
        cache_write_5m=Decimal(write_5m),
        cache_write_1h=Decimal(write_1h),
        output=Decimal(output),
    )


SONNET = PriceRecord(
    provider="anthropic",
    model="sonnet-like",
    rates=rates("3", "0.3", "3.75", "6", "15"),
    long_context_threshold=200_000,
    long_context_rates=rates("6", "0.6", "7.5", "12", "22.5"),
    source=SOURCE,
)
GPT = PriceRecord(
    provider="openai",
    model="gpt-like",
    rates=rates("1.25", "0.125", "1.25", "1.25", "10"),
    source=SOURCE,
)
TINY = PriceRecord(
    provider="openai", model="tiny", rates=rates("0.4", "0", "0", "0", "0"), source=SOURCE
)
BOOK = PriceBook([SONNET, GPT, TINY])

SHORT_SONNET_CALL = ModelCall(
    model="sonnet-like",
    usage=Usage(
        input=12_345, cache_read=150_000, cache_write=20_000, cache_write_1h=5_000, output=4_321
    ),
)


def test_one_call_by_hand() -> None:
    pricing = BOOK.price([SHORT_SONNET_CALL], on=DAY)
    # 12345 x 3 + 150000 x 0.3 + 15000 x 3.75 + 5000 x 6 + 4321 x 15, per million tokens
    assert pricing.by_tier == TierCosts(
        input=Decimal("0.037035"),
        cache_read=Decimal("0.045"),
        cache_write_5m=Decimal("0.05625"),
        cache_write_1h=Decimal("0.03"),
        output=Decimal("0.064815"),
    )
    assert pricing.priced_total == Decimal("0.2331")
    assert pricing.total_usd == 0.2331
    assert pricing.long_context_calls == 0
    assert pricing.calls[0].record_id == "anthropic/sonnet-like@origin"


def test_a_long_prompt_bills_the_whole_call_at_the_long_rates() -> None:
    # prompt = 10000 + 190000 + 1000 = 201000 > 200000
    long_call = ModelCall(
        model="sonnet-like",
        usage=Usage(input=10_000, cache_read=190_000, cache_write=1_000, output=2_000),
    )
    pricing = BOOK.price([long_call], on=DAY)
    # 10000 x 6 + 190000 x 0.6 + 1000 x 7.5 + 2000 x 22.5, per million tokens
    assert pricing.priced_total == Decimal("0.2265")
    assert pricing.calls[0].long_context
    assert pricing.long_context_calls == 1


def test_a_prompt_exactly_at_the_threshold_is_not_long() -> None:
    at_threshold = ModelCall(model="sonnet-like", usage=Usage(input=200_000, output=0))
    pricing = BOOK.price([at_threshold], on=DAY)
    assert pricing.priced_total == Decimal("0.6")
    assert not pricing.calls[0].long_context


def test_each_model_at_its_own_rate() -> None:
    gpt_call = ModelCall(
        model="gpt-like", usage=Usage(input=100_000, cache_read=400_000, output=20_000)
    )
    long_call = ModelCall(
        model="sonnet-like",
        usage=Usage(input=10_000, cache_read=190_000, cache_write=1_000, output=2_000),
    )
    pricing = BOOK.price([SHORT_SONNET_CALL, gpt_call, long_call], on=DAY)
    # sonnet short 0.2331 + gpt 0.125 + 0.05 + 0.2 = 0.375 + sonnet long 0.2265
    assert [call.cost.total for call in pricing.calls if call.cost] == [
        Decimal("0.2331"),
        Decimal("0.375"),
        Decimal("0.2265"),
    ]
    assert pricing.total_usd == 0.8346
    assert [record.id for record in pricing.records] == [
        "anthropic/sonnet-like@origin",
        "openai/gpt-like@origin",
    ]
    assert pricing.long_context_calls == 1


def test_reasoning_is_part_of_output_and_not_billed_twice() -> None:
    call = ModelCall(model="gpt-like", usage=Usage(output=1_000, reasoning=800))
    assert BOOK.price([call], on=DAY).priced_total == Decimal("0.01")


def test_an_unpriced_model_leaves_no_total() -> None:
    calls = [
        SHORT_SONNET_CALL,
        ModelCall(model="mystery", usage=Usage(input=1_000_000)),
        ModelCall(model="mystery", usage=Usage(output=5)),
    ]
    pricing = BOOK.price(calls, on=DAY)
    assert pricing.total_usd is None
    assert not pricing.complete
    assert pricing.priced_usd == 0.2331
    assert pricing.unpriced_models == ("mystery",)
    (entry,) = pricing.unpriced
    assert (entry.model, entry.calls) == ("mystery", 2)
    assert entry.reason.startswith("unknown model 'mystery'")
    assert [call.record_id for call in pricing.calls] == [
        "anthropic/sonnet-like@origin",
        None,
        None,
    ]
    assert pricing.calls[1].usd is None


def test_no_calls_cost_nothing() -> None:
    pricing = BOOK.price([], on=DAY)
    assert pricing.total_usd == 0.0
    assert pricing.records == ()


def test_floats_are_rounded_once_from_the_exact_total() -> None:
    calls = [ModelCall(model="tiny", usage=Usage(input=1))] * 3
    pricing = BOOK.price(calls, on=DAY)
    assert pricing.priced_total == Decimal("0.0000012")
    assert pricing.total_usd == 0.000001
    assert [call.usd for call in pricing.calls] == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    ("amount", "usd"),
    [("0.0000005", 0.000001), ("0.00000049", 0.0), ("1.2345675", 1.234568), ("12", 12.0)],
)
def test_rounding_is_half_up_to_a_millionth(amount: str, usd: float) -> None:
    assert to_usd(Decimal(amount)) == usd


def test_inconsistent_usage_is_a_bug_not_a_price() -> None:
    with pytest.raises(ValueError, match="1-hour cache writes"):
        tier_costs(Usage(cache_write=1, cache_write_1h=2), GPT.rates)
    with pytest.raises(ValueError, match="negative token count"):
        tier_costs(Usage(input=-1), GPT.rates)


def test_pricing_survives_a_json_round_trip() -> None:
    pricing = BOOK.price([SHORT_SONNET_CALL], on=DAY)
    text = pricing.model_dump_json()
    assert '"priced_total":"0.2331"' in text
    assert Pricing.model_validate_json(text) == pricing


def test_the_bundled_sonnet_4_5_by_hand() -> None:
    pricing = PriceBook.bundled().price(
        [SHORT_SONNET_CALL.model_copy(update={"model": "claude-sonnet-4-5-20250929"})], on=DAY
    )
    assert pricing.total_usd == 0.2331
    (record,) = pricing.records
    assert record.source.name == "genai-prices"


def test_the_bundled_gemini_2_5_pro_long_tier_by_hand() -> None:
    call = ModelCall(
        model="gemini-2.5-pro", provider="google", usage=Usage(input=250_000, output=1_000)
    )
    # above 200000 prompt tokens: 250000 x 2.5 + 1000 x 15, per million tokens
    assert PriceBook.bundled().price([call], on=DAY).total_usd == 0.64


# --- invariants -------------------------------------------------------------------------------

counts = st.integers(min_value=0, max_value=3_000_000)


@st.composite
def usages(draw: st.DrawFn) -> Usage:
    cache_write = draw(counts)
    output = draw(counts)
    return Usage(
        input=draw(counts),
        cache_read=draw(counts),
        cache_write=cache_write,
        cache_write_1h=draw(st.integers(min_value=0, max_value=cache_write)),
        output=output,
        reasoning=draw(st.integers(min_value=0, max_value=output)),
    )


calls = st.lists(
    st.builds(
        ModelCall, model=st.sampled_from(["sonnet-like", "gpt-like", "tiny"]), usage=usages()
    ),
    max_size=12,
)


@given(calls)
def test_a_total_is_the_sum_of_its_calls(batch: list[ModelCall]) -> None:
    pricing = BOOK.price(batch, on=DAY)
    singles = [BOOK.price([call], on=DAY).priced_total for call in batch]
    assert pricing.priced_total == sum(singles, Decimal(0))
    assert pricing.by_tier.total == pricing.priced_total
    assert sum((call.cost.total for call in pricing.calls if call.cost), Decimal(0)) == (
        pricing.priced_total
    )


@given(calls)
def test_order_does_not_matter(batch: list[ModelCall]) -> None:
    forward = BOOK.price(batch, on=DAY)
    backward = BOOK.price(list(reversed(batch)), on=DAY)
    assert forward.priced_total == backward.priced_total
    assert forward.records == backward.records


@given(usages(), usages())
def test_cost_is_linear_in_tokens_without_a_long_tier(first: Usage, second: Usage) -> None:
    assert tier_costs(first + second, GPT.rates) == tier_costs(first, GPT.rates) + tier_costs(
        second, GPT.rates
    )


@given(usages())
def test_a_long_call_never_costs_less_than_at_base_rates(usage: Usage) -> None:
    assert SONNET.long_context_rates is not None
    long_cost = tier_costs(usage, SONNET.long_context_rates).total
    assert long_cost >= tier_costs(usage, SONNET.rates).total
