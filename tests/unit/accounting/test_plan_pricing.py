"""Before a run: which models each variant names, their prices, and what a run would refuse."""

from __future__ import annotations

from datetime import date

import pytest

from harnessdrive.accounting import PriceBook
from harnessdrive.accounting.plan_pricing import price_variants
from harnessdrive.cli.flags import error_message
from harnessdrive.errors import BudgetError, UserError
from harnessdrive.harnesses.base import Harness, ModelPlan, PlannedModel, planned_models
from harnessdrive.harnesses.command import CommandHarness
from harnessdrive.harnesses.scripted import ReferenceAgent
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.agents import SpendingAgent

DAY = date(2026, 11, 29)
BOOK = PriceBook.bundled()
SPENDER = "harnessdrive.testing.agents:SpendingAgent"
HARNESSES: dict[str, Harness] = {
    "command": CommandHarness(),
    "reference": ReferenceAgent(),
    SPENDER: SpendingAgent(),
}


def variant(harness: str, name: str, model: str | None = None, **options: object) -> VariantSpec:
    return VariantSpec(harness=harness, name=name, model=model, options=options)


def test_the_plan_comes_from_the_harness_else_from_a_pinned_model() -> None:
    spender = variant(SPENDER, "s", "claude-sonnet-4-5", calls=[{"model": "gpt-5", "input": 1}])
    assert planned_models(SpendingAgent(), spender) == ModelPlan(
        (PlannedModel("claude-sonnet-4-5"), PlannedModel("gpt-5")), source="options.calls"
    )
    pinned = variant("command", "c", "gpt-5", template="true")
    assert planned_models(CommandHarness(), pinned) == ModelPlan(
        (PlannedModel("gpt-5"),), source="--model"
    )
    assert planned_models(CommandHarness(), variant("command", "c", template="true")) == (
        ModelPlan()
    )


def test_variants_are_priced_from_the_records_in_force() -> None:
    variants = [
        variant(SPENDER, "s", "claude-sonnet-4-5", models=["claude-sonnet-4-5", "gpt-5"]),
        variant("reference", "ref"),
        variant("command", "bare", template="true"),
        variant("command", "pinned", "gpt-5", template="true"),
    ]
    found = price_variants(variants, HARNESSES, BOOK, on=DAY)
    spender, reference, bare, pinned = (found.variants[v.label] for v in variants)
    assert spender.priced and [r.id for r in spender.records] == [
        "anthropic/claude-sonnet-4-5@origin",
        "openai/gpt-5@origin",
    ]
    assert spender.estimate is not None and spender.estimate.basis == "assumption"
    # short run on gpt-5: 20k x 1.25 + 150k x 0.125 + 20k x 1.25 + 4k x 10 = 0.10875
    assert spender.estimate.low_usd == 0.10875
    # long run on claude-sonnet-4-5: 0.45 + 0.9 + 0.5625 + 0.75
    assert spender.estimate.high_usd == 2.6625
    assert not reference.uses_model and not reference.priced
    assert bare.uses_model and not bare.priced and bare.estimate is None
    assert pinned.priced
    assert [v.variant.label for v in found.priced] == ["s", "pinned"]
    found.check(max_usd=10)
    with pytest.raises(BudgetError, match="a spend cap is required: s, pinned spend money") as cap:
        found.check(max_usd=None)
    assert "--" not in str(cap.value)
    assert error_message(cap.value).endswith("then set the cap (--max-usd USD)")


def test_a_model_without_a_price_is_refused_with_the_fix_unless_allowed() -> None:
    odd = variant(SPENDER, "odd", "mock-nobody")
    found = price_variants([odd], HARNESSES, BOOK, on=DAY)
    with pytest.raises(UserError) as caught:
        found.check(max_usd=10)
    message = str(caught.value)
    assert message.startswith("cannot price odd: unknown model 'mock-nobody'")
    assert "--" not in message
    assert error_message(caught.value).endswith(
        "by allowing odd unpriced (--prices FILE, --allow-unpriced odd)"
    )
    allowed = price_variants([odd], HARNESSES, BOOK, on=DAY, allow_unpriced={SPENDER})
    allowed.check(max_usd=10)
    assert allowed.variants["odd"].allow_unpriced


def test_a_harness_that_plans_models_but_names_none_is_refused_unless_allowed() -> None:
    # SpendingAgent implements plan_models; with no model anywhere its plan is empty, like a
    # Codex adapter that finds neither --model nor a model in the CLI's config.
    silent = variant(SPENDER, "silent", None, models=[])
    found = price_variants([silent], HARNESSES, BOOK, on=DAY)
    assert found.variants["silent"].priced
    with pytest.raises(UserError) as caught:
        found.check(max_usd=10)
    assert str(caught.value).startswith(
        f"cannot price silent: cannot tell which model it will use; pin one for {SPENDER}"
    )
    shown = error_message(caught.value)
    assert shown.endswith(f"(--model {SPENDER}=MODEL, --prices FILE, --allow-unpriced silent)")
    allowed = price_variants([silent], HARNESSES, BOOK, on=DAY, allow_unpriced={"silent"})
    allowed.check(max_usd=10)
    assert allowed.variants["silent"].estimate is None


def test_allow_unpriced_must_name_a_harness_of_the_run() -> None:
    with pytest.raises(UserError) as caught:
        price_variants(
            [variant("reference", "ref")], HARNESSES, BOOK, on=DAY, allow_unpriced={"gemini"}
        )
    assert error_message(caught.value) == (
        "allowed unpriced, but no harness of this run: gemini (--allow-unpriced)"
    )


def test_bad_spending_agent_options_are_refused_before_running() -> None:
    with pytest.raises(UserError, match=r"bad SpendingAgent options: calls\.0\.inptu"):
        SpendingAgent().check_variant(variant(SPENDER, "s", "m", calls=[{"inptu": 1}]))
    with pytest.raises(UserError, match="needs a 'model'"):
        SpendingAgent().check_variant(variant(SPENDER, "s", None, calls=[{"input": 1}]))
