"""The bundled price file against the pinned genai-prices package it was generated from."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from importlib import resources
from pathlib import Path

import genai_prices
import pytest

from harnessdrive.accounting import PriceBook, PriceRecord, tier_costs
from harnessdrive.transcript import Usage

REPO = Path(__file__).resolve().parents[3]
GENERATOR = REPO / "scripts" / "generate_prices.py"
BUNDLED = resources.files("harnessdrive.accounting").joinpath("data/prices.json")
BOOK = PriceBook.bundled()
TODAY = date(2026, 11, 29)


def run_generator(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENERATOR), *args],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_regenerating_gives_the_same_bytes(tmp_path: Path) -> None:
    target = tmp_path / "prices.json"
    done = run_generator("--output", str(target))
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == BUNDLED.read_bytes()


def test_check_mode_reports_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "prices.json"
    stale.write_bytes(BUNDLED.read_bytes().replace(b'"input":"3"', b'"input":"2.99"', 1))
    done = run_generator("--check", "--output", str(stale))
    assert done.returncode == 1
    assert "out of date" in done.stderr
    assert run_generator("--check").returncode == 0


def test_the_file_names_its_package_and_snapshot() -> None:
    sources = {record.source for record in BOOK.records}
    assert len(sources) == 1
    (source,) = sources
    assert (source.name, source.version) == ("genai-prices", genai_prices.__version__)
    assert source.snapshot_date == TODAY


def rates_of(model: str, provider: str | None = None, on: date = TODAY) -> dict[str, str]:
    record = BOOK.lookup(model, provider, on=on)
    assert record is not None, model
    return {name: str(value) for name, value in record.rates.model_dump().items()}


def test_claude_sonnet_4_5() -> None:
    assert rates_of("claude-sonnet-4-5-20250929") == {
        "input": "3",
        "cache_read": "0.3",
        "cache_write_5m": "3.75",
        "cache_write_1h": "6",
        "output": "15",
    }


@pytest.mark.parametrize(
    ("model", "input_", "cache_read", "output"),
    [
        ("gpt-5", "1.25", "0.125", "10"),
        ("gpt-5-codex", "1.25", "0.125", "10"),
        ("gpt-5-mini", "0.25", "0.025", "2"),
        ("gpt-5-nano", "0.05", "0.005", "0.4"),
    ],
)
def test_gpt_5_family(model: str, input_: str, cache_read: str, output: str) -> None:
    rates = rates_of(model, "openai")
    assert (rates["input"], rates["cache_read"], rates["output"]) == (input_, cache_read, output)
    # OpenAI lists no cache-write price: such tokens are billed as input.
    assert rates["cache_write_5m"] == rates["cache_write_1h"] == input_


def test_gemini_2_5_pro_has_a_long_context_tier() -> None:
    record = BOOK.lookup("gemini/gemini-2.5-pro", on=TODAY)
    assert record is not None
    assert record.long_context_threshold == 200_000
    assert record.long_context_rates is not None
    assert (record.rates.input, record.rates.output) == (Decimal("1.25"), Decimal(10))
    assert (record.long_context_rates.input, record.long_context_rates.output) == (
        Decimal("2.5"),
        Decimal(15),
    )


def test_a_dated_price_change_is_two_records() -> None:
    before = BOOK.lookup("claude-opus-4-6", on=date(2026, 3, 12))
    after = BOOK.lookup("claude-opus-4-6", on=date(2026, 3, 13))
    assert before is not None and after is not None
    assert before.valid_to == after.valid_from == date(2026, 3, 13)
    assert before.long_context_threshold == 200_000
    assert after.long_context_threshold is None


def test_the_providers_the_harnesses_use_are_covered() -> None:
    providers = {record.provider for record in BOOK.records}
    assert {"anthropic", "openai", "google"} <= providers
    assert all(record.source.name == "genai-prices" for record in BOOK.records)


def test_models_made_by_another_provider_are_left_to_it() -> None:
    assert {record.provider for record in BOOK.records if record.model.startswith("claude")} == {
        "anthropic"
    }


def day_inside(record: PriceRecord) -> date:
    if record.valid_from is not None:
        return record.valid_from
    if record.valid_to is not None:
        return record.valid_to - timedelta(days=1)
    return TODAY


def package_cost(record: PriceRecord, name: str, usage: Usage, on: date) -> tuple[Decimal, str]:
    # genai-prices counts every prompt token as input and the cache tiers as parts of it.
    package_usage = genai_prices.Usage(
        input_tokens=usage.prompt_tokens,
        cache_read_tokens=usage.cache_read,
        cache_write_tokens=usage.cache_write,
        cache_write_1h_tokens=usage.cache_write_1h,
        output_tokens=usage.output,
    )
    result = genai_prices.calc_price(
        package_usage,
        name,
        provider_id=record.provider,
        genai_request_timestamp=datetime(on.year, on.month, on.day, 12, tzinfo=UTC),
    )
    return result.total_price, result.model.id


SHORT = Usage(input=1_234, cache_read=56_789, cache_write=4_321, cache_write_1h=1_000, output=987)
LONG = Usage(input=5_000, cache_read=300_000, cache_write=7_000, cache_write_1h=2_000, output=3_210)


@pytest.mark.parametrize("record", BOOK.records, ids=lambda record: record.id)
def test_every_record_bills_what_the_package_bills(record: PriceRecord) -> None:
    on = day_inside(record)
    for usage in (SHORT, LONG):
        rates, _ = record.rates_for(usage.prompt_tokens)
        ours = tier_costs(usage, rates).total
        # Every name of the record is one the package prices as the same model, at the same cost.
        package_models = set()
        for name in record.names:
            theirs, package_model = package_cost(record, name, usage, on)
            assert ours == theirs, f"{name} ({record.id}) on {on}: {ours} != {theirs}"
            package_models.add(package_model)
        assert len(package_models) == 1


def test_pricing_never_needs_the_package_at_run_time() -> None:
    # Blocking the import makes any use of genai_prices by harnessdrive fail loudly.
    code = (
        "import sys; sys.modules['genai_prices'] = None\n"
        "from datetime import date\n"
        "from harnessdrive.accounting import PriceBook\n"
        "print(PriceBook.bundled().lookup('gpt-5', 'openai', on=date(2026, 11, 29)).id)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "openai/gpt-5@origin"
