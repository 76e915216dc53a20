"""Every cost field of result.json and of the estimate JSON is documented in docs/pricing.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from harnessdrive.accounting.run_estimate import Estimate, ModelPriceRow, VariantEstimate
from harnessdrive.store.result_cost import Cost, CostEstimate, ModelSpend, PriceUsed

PRICING = (Path(__file__).resolve().parents[3] / "docs" / "pricing.md").read_text()


def names(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


@pytest.mark.parametrize(
    ("model", "form"),
    [
        (Cost, "`cost.{}`"),
        (PriceUsed, "`{}`"),
        (ModelSpend, "`{}`"),
        (CostEstimate, "`{}`"),
        (Estimate, "`{}`"),
        (VariantEstimate, "`{}`"),
        (ModelPriceRow, "`{}`"),
    ],
)
def test_every_field_is_documented(model: type[BaseModel], form: str) -> None:
    assert [n for n in names(model) if form.format(n) not in PRICING] == []


def test_every_cost_source_is_documented() -> None:
    for source in ("computed", "reported", "estimated", "unmeasured", "unpriced", "none"):
        assert f"| `{source}` |" in PRICING
