from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from harnessdrive.accounting import PriceBook, PriceRecord, PriceSource, Rates

SOURCE = PriceSource(name="test-data", version="1")
DAY = date(2026, 6, 15)


def flat(rate: str) -> Rates:
    value = Decimal(rate)
    return Rates(
        input=value, cache_read=value, cache_write_5m=value, cache_write_1h=value, output=value
    )


def record(provider: str | None, model: str, rate: str, **changes: object) -> PriceRecord:
    fields: dict[str, object] = {
        "provider": provider,
        "model": model,
        "rates": flat(rate),
        "source": SOURCE,
    }
    fields.update(changes)
    return PriceRecord.model_validate(fields)


BOOK = PriceBook(
    [
        record("anthropic", "claude-sonnet-4-5", "3", aliases=("claude-sonnet-4.5",)),
        record("anthropic", "claude-opus-4-6", "10", valid_to=date(2026, 3, 13)),
        record("anthropic", "claude-opus-4-6", "5", valid_from=date(2026, 3, 13)),
        record("openai", "gpt-4o", "2.5", aliases=("gpt-4o-2024-08-06",)),
        record("openai", "gpt-4o-2024-05-13", "5"),
        record("openai", "gpt-5", "1.25"),
        record("google", "gemini-2.5-pro", "1.25"),
        record("google", "shared-model", "1"),
        record("mistral", "shared-model", "2"),
        record("openai", "future-model", "1", valid_from=date(2027, 1, 1)),
    ]
)


def found(model: str, provider: str | None = None, on: date = DAY) -> str | None:
    hit = BOOK.lookup(model, provider, on=on)
    return None if hit is None else f"{hit.id} {hit.rates.input}"


@pytest.mark.parametrize(
    ("model", "provider", "expected"),
    [
        ("claude-sonnet-4-5", None, "anthropic/claude-sonnet-4-5@origin 3"),
        ("claude-sonnet-4-5-20250929", None, "anthropic/claude-sonnet-4-5@origin 3"),
        ("CLAUDE-SONNET-4-5", "Anthropic", "anthropic/claude-sonnet-4-5@origin 3"),
        ("anthropic/claude-sonnet-4-5", None, "anthropic/claude-sonnet-4-5@origin 3"),
        ("claude-sonnet-4-5@20250929", "anthropic", "anthropic/claude-sonnet-4-5@origin 3"),
        ("claude-sonnet-4.5", None, "anthropic/claude-sonnet-4-5@origin 3"),
        ("gpt-4o-2024-08-06", "openai", "openai/gpt-4o@origin 2.5"),
        ("models/gemini-2.5-pro", "gemini", "google/gemini-2.5-pro@origin 1.25"),
    ],
)
def test_normalised_ids_find_their_record(model: str, provider: str | None, expected: str) -> None:
    assert found(model, provider) == expected


def test_a_dated_id_listed_on_its_own_keeps_its_own_price() -> None:
    # Trimming the date would land on gpt-4o at half the price: the exact name wins.
    assert found("gpt-4o-2024-05-13") == "openai/gpt-4o-2024-05-13@origin 5"


def test_the_record_in_force_on_the_day_is_used() -> None:
    assert found("claude-opus-4-6", on=date(2026, 3, 12)) == "anthropic/claude-opus-4-6@origin 10"
    assert found("claude-opus-4-6", on=date(2026, 3, 13)) == (
        "anthropic/claude-opus-4-6@2026-03-13 5"
    )


@pytest.mark.parametrize(
    "model",
    ["gpt-5.9", "gpt-5-turbo", "claude-sonnet-4-5-extended", "claude", "", "mock-model"],
)
def test_unknown_models_are_unpriced_never_a_neighbour(model: str) -> None:
    assert found(model) is None
    reason = BOOK.resolve(model, on=DAY).reason
    assert reason is not None
    assert reason.startswith("unknown model")


def test_a_model_billed_by_another_provider_is_unpriced() -> None:
    assert found("gpt-5", "anthropic") is None
    assert BOOK.resolve("gpt-5", "anthropic", on=DAY).reason == (
        "'gpt-5' is priced only for provider openai, not 'anthropic'"
    )


def test_no_record_in_force_is_unpriced() -> None:
    assert found("future-model") is None
    assert BOOK.resolve("future-model", on=DAY).reason == (
        "no price for 'future-model' in force on 2026-06-15"
    )
    assert found("future-model", on=date(2027, 1, 1)) == "openai/future-model@2027-01-01 1"


def test_several_providers_need_a_provider_or_a_prefix() -> None:
    lookup = BOOK.resolve("shared-model", on=DAY)
    assert lookup.record is None
    assert lookup.reason == (
        "'shared-model' is priced by several providers (google, mistral); name the provider"
    )
    assert found("shared-model", "mistral") == "mistral/shared-model@origin 2"
    assert found("google/shared-model") == "google/shared-model@origin 1"


def test_a_prefix_never_overrides_an_explicit_provider() -> None:
    assert found("anthropic/gpt-5", "openai") == "openai/gpt-5@origin 1.25"
    assert found("anthropic/gpt-5") == "openai/gpt-5@origin 1.25"


def test_overlapping_bundled_records_are_a_bug() -> None:
    with pytest.raises(ValueError, match="price records overlap"):
        PriceBook([record("openai", "x", "1"), record("openai", "x", "2", valid_from=DAY)])


def test_an_empty_book_prices_nothing() -> None:
    assert PriceBook().lookup("gpt-5", on=DAY) is None
