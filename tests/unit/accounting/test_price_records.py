from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from pydantic import ValidationError

from harnessdrive.accounting import PriceRecord, PriceSource, Rates

SOURCE = PriceSource(name="test")
BASE = Rates(
    input=Decimal(3),
    cache_read=Decimal("0.3"),
    cache_write_5m=Decimal("3.75"),
    cache_write_1h=Decimal(6),
    output=Decimal(15),
)
LONG = Rates(
    input=Decimal(6),
    cache_read=Decimal("0.6"),
    cache_write_5m=Decimal("7.5"),
    cache_write_1h=Decimal(12),
    output=Decimal("22.5"),
)


def record(**changes: object) -> PriceRecord:
    fields: dict[str, object] = {
        "provider": "anthropic",
        "model": "m",
        "rates": BASE,
        "source": SOURCE,
    }
    fields.update(changes)
    return PriceRecord.model_validate(fields)


def test_model_ids_and_providers_are_stored_lower_case_and_stripped() -> None:
    stored = record(provider=" Anthropic ", model=" Claude-X ", aliases=("Claude-X-Latest",))
    assert (stored.provider, stored.model, stored.aliases) == (
        "anthropic",
        "claude-x",
        ("claude-x-latest",),
    )


def test_threshold_without_long_rates_is_refused() -> None:
    with pytest.raises(ValidationError, match="give both or neither"):
        record(long_context_threshold=200_000)
    with pytest.raises(ValidationError, match="give both or neither"):
        record(long_context_rates=LONG)


def test_validity_must_run_forwards() -> None:
    with pytest.raises(ValidationError, match="must be before"):
        record(valid_from=date(2026, 3, 1), valid_to=date(2026, 3, 1))


@pytest.mark.parametrize("bad", ["-1", "NaN", "Infinity"])
def test_rates_must_be_finite_and_not_negative(bad: str) -> None:
    with pytest.raises(ValidationError, match="finite number"):
        Rates(
            input=Decimal(bad),
            cache_read=Decimal(0),
            cache_write_5m=Decimal(0),
            cache_write_1h=Decimal(0),
            output=Decimal(0),
        )


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError, match="Extra inputs"):
        record(price_per_token=1)


def test_validity_is_half_open() -> None:
    spring = record(valid_from=date(2026, 3, 1), valid_to=date(2026, 6, 1))
    assert not spring.in_force(date(2026, 2, 28))
    assert spring.in_force(date(2026, 3, 1))
    assert spring.in_force(date(2026, 5, 31))
    assert not spring.in_force(date(2026, 6, 1))
    assert record().in_force(date(1990, 1, 1))


def test_overlap_of_spans() -> None:
    spring = record(valid_from=date(2026, 3, 1), valid_to=date(2026, 6, 1))
    summer = record(valid_from=date(2026, 6, 1))
    assert not spring.overlaps(summer)
    assert not summer.overlaps(spring)
    assert spring.overlaps(record(valid_to=date(2026, 3, 2)))
    assert not spring.overlaps(record(valid_to=date(2026, 3, 1)))
    assert record().overlaps(spring)


def test_long_rates_apply_only_above_the_threshold() -> None:
    tiered = record(long_context_threshold=200_000, long_context_rates=LONG)
    assert tiered.rates_for(200_000) == (BASE, False)
    assert tiered.rates_for(200_001) == (LONG, True)
    assert record().rates_for(10**9) == (BASE, False)


def test_id_names_provider_model_and_start() -> None:
    assert record(valid_from=date(2026, 3, 1)).id == "anthropic/m@2026-03-01"
    assert record(provider=None).id == "*/m@origin"


def test_source_label() -> None:
    package = PriceSource(name="genai-prices", version="0.2.3", snapshot_date=date(2026, 11, 29))
    assert package.label == "genai-prices 0.2.3 (snapshot 2026-11-29)"
    assert PriceSource(name="user config", file="prices.toml").label == "user config prices.toml"
