"""A trial's cost in result.json, end to end through the run driver and a scripted spender."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from harnessdrive.cli.flags import error_message
from harnessdrive.errors import BudgetError, UserError
from harnessdrive.report.scoreboard import build_report
from harnessdrive.testing.prices import EXAMPLE_CALLS, EXAMPLE_TOTAL_USD
from tests.integration.spending import (
    make_suite,
    result_json,
    run_suite,
    spender,
    write_prices,
)
from tests.trial_results import trial_folder

# harnessdrive.testing.prices.EXAMPLE_CALLS as SpendingAgent options; its docstring has the hand
# computation: 0.1425 + 0.264 (over mock-big's 200k long-context threshold) + 0.017 = 0.4235.
CALLS = [
    {"model": call.model, **call.usage.model_dump(exclude_defaults=True)} for call in EXAMPLE_CALLS
]
TOTAL = EXAMPLE_TOTAL_USD


def test_two_models_and_a_long_context_call_cost_the_hand_computation(tmp_path: Path) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(
        tmp_path,
        [
            spender("near", "mock-big", calls=CALLS, reported_usd=0.43),  # 1.5% from ours
            spender("far", "mock-big", calls=CALLS, reported_usd=0.40),  # 5.9% from ours
        ],
    )
    results = tmp_path / "results"
    summary = run_suite(suite, results, prices=prices, max_usd=5)

    near = result_json(results, "suite/t0/near/r1")
    cost = near["cost"]
    assert (cost["usd"], cost["charged_usd"], cost["source"]) == (TOTAL, TOTAL, "computed")
    assert cost["long_context_calls"] == 1
    assert cost["priced_on"] == near["started"][:10]
    assert [(p["record"], p["source"]) for p in cost["prices"]] == [
        ("*/mock-big@origin", f"user config {prices} row 1"),
        ("*/mock-small@origin", f"user config {prices} row 2"),
    ]
    by_model = {m["model"]: m for m in cost["models"]}
    assert by_model["mock-big"]["usd"] == 0.4065
    assert by_model["mock-big"]["calls"] == 2
    assert by_model["mock-big"]["long_context_calls"] == 1
    assert by_model["mock-small"]["usd"] == 0.017
    assert by_model["mock-small"]["usage"]["cache_read"] == 20_000
    assert (cost["reported_usd"], cost["mismatch"]) == (0.43, False)
    assert cost["reported_difference"] == pytest.approx((0.4235 - 0.43) / 0.43, abs=1e-6)

    far = result_json(results, "suite/t0/far/r1")["cost"]
    assert (far["usd"], far["reported_usd"], far["mismatch"]) == (TOTAL, 0.40, True)
    assert "more than 2% apart" in far["note"]

    ledger = json.loads((trial_folder(results, "suite/t0/near/r1") / "cost.json").read_text())
    assert [call["long_context"] for call in ledger["calls"]] == [False, True, False]
    assert ledger["priced_total"] == "0.4235"

    report = build_report(summary.trials)
    rows = {row.variant: row for row in report.harnesses}
    assert rows["far"].cost_mismatches == 1 and rows["near"].cost_mismatches == 0
    assert any("more than 2% apart" in note and "far" in note for note in report.notes)


def test_bundled_price_records_price_a_long_context_call(tmp_path: Path) -> None:
    # claude-sonnet-4-5 in the bundled genai-prices records: 3 / 0.3 / 3.75 / 6 / 15, and above
    # 200k prompt tokens 6 / 0.6 / 7.5 / 12 / 22.5; claude-haiku-4-5: 1 in, 5 out.
    calls = [
        {"input": 1_000, "cache_read": 50_000, "output": 2_000},  # 0.003 + 0.015 + 0.03
        {"input": 1_000, "cache_read": 210_000, "output": 2_000},  # 0.006 + 0.126 + 0.045
        {"model": "claude-haiku-4-5-20251001", "input": 300, "output": 40},  # 0.0003 + 0.0002
    ]
    suite = make_suite(tmp_path, [spender("claude", "claude-sonnet-4-5", calls=calls)])
    results = tmp_path / "results"
    run_suite(suite, results, max_usd=5)
    cost = result_json(results, "suite/t0/claude/r1")["cost"]
    assert cost["usd"] == 0.2255  # 0.048 + 0.177 + 0.0005
    assert cost["long_context_calls"] == 1
    assert {p["record"] for p in cost["prices"]} == {
        "anthropic/claude-sonnet-4-5@origin",
        "anthropic/claude-haiku-4-5@origin",
    }
    assert all(p["source"].startswith("genai-prices 0.2.3") for p in cost["prices"])


def test_the_record_in_force_on_the_day_the_trial_started_prices_it(tmp_path: Path) -> None:
    today = datetime.now(UTC).date()
    past, soon = today - timedelta(days=30), today + timedelta(days=1)
    prices = write_prices(
        tmp_path,
        f"""
[[price]]
model = "mock-dated"
input = 1
output = 1
valid_to = {past.isoformat()}

[[price]]
model = "mock-dated"
input = 2
output = 2
valid_from = {past.isoformat()}
valid_to = {soon.isoformat()}

[[price]]
model = "mock-dated"
input = 4
output = 4
valid_from = {soon.isoformat()}
""",
    )
    calls = [{"input": 1_000_000}]
    suite = make_suite(tmp_path, [spender("dated", "mock-dated", calls=calls)])
    results = tmp_path / "results"
    run_suite(suite, results, prices=prices, max_usd=50)
    cost = result_json(results, "suite/t0/dated/r1")["cost"]
    assert cost["usd"] == 2.0
    (used,) = cost["prices"]
    assert used["record"] == f"*/mock-dated@{past.isoformat()}"
    assert (used["valid_from"], used["valid_to"]) == (past.isoformat(), soon.isoformat())


def test_a_subscription_run_gets_the_api_equivalent_cost_labelled(tmp_path: Path) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(
        tmp_path,
        [spender("plan", "mock-small", calls=[{"input": 250_000}], billing="subscription")],
    )
    results = tmp_path / "results"
    summary = run_suite(suite, results, prices=prices, max_usd=5)
    cost = result_json(results, "suite/t0/plan/r1")["cost"]
    assert (cost["usd"], cost["billing"], cost["source"]) == (0.25, "subscription", "computed")
    assert "API-equivalent" in cost["note"]
    assert any("subscription" in note for note in build_report(summary.trials).notes)


def test_an_unpriced_model_stops_the_run_before_any_trial(tmp_path: Path) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(
        tmp_path,
        [spender("known", "mock-small", calls=[{"input": 10}]), spender("odd", "mock-nobody")],
    )
    results = tmp_path / "results"
    with pytest.raises(UserError) as caught:
        run_suite(suite, results, prices=prices, max_usd=5)
    message = error_message(caught.value)
    assert "odd" in message and "mock-nobody" in message
    assert message.endswith("(--prices FILE, --allow-unpriced odd)")
    assert not (results / "trials").exists()


def test_allow_unpriced_runs_it_at_zero_labelled(tmp_path: Path) -> None:
    prices = write_prices(tmp_path)
    calls = [{"input": 1_000_000}, {"model": "mock-small", "input": 100_000}]
    suite = make_suite(tmp_path, [spender("odd", "mock-nobody", calls=calls)])
    results = tmp_path / "results"
    summary = run_suite(suite, results, prices=prices, max_usd=5, allow_unpriced=frozenset({"odd"}))
    cost = result_json(results, "suite/t0/odd/r1")["cost"]
    assert cost["source"] == "unpriced"
    assert cost["usd"] is None
    assert cost["charged_usd"] == 0.1  # the priced call only; mock-nobody counts $0
    assert cost["unpriced_models"] == ["mock-nobody"]
    assert "allowed unpriced" in cost["note"]
    (row,) = build_report(summary.trials).harnesses
    assert row.unmeasured == 1


def test_max_usd_is_required_for_a_harness_that_spends(tmp_path: Path) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(tmp_path, [spender("paid", "mock-small"), "reference"])
    with pytest.raises(BudgetError, match="a spend cap is required: paid spends"):
        run_suite(suite, tmp_path / "results", prices=prices)
    with pytest.raises(BudgetError, match=r"more than \$0, not 0"):
        run_suite(suite, tmp_path / "results", prices=prices, max_usd=0)


def test_scripted_agents_need_no_cap_and_cost_nothing(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, ["reference"])
    results = tmp_path / "results"
    run_suite(suite, results)
    cost = result_json(results, "suite/t0/reference/r1")["cost"]
    assert (cost["usd"], cost["source"], cost["charged_usd"]) == (0.0, "none", 0.0)
