"""``harnessdrive estimate`` and the spend options of ``harnessdrive run`` on the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.cli.app import run_cli
from tests.integration.spending import (
    SMALL_HIGH,
    SMALL_LOW,
    make_suite,
    small_calls,
    spender,
    write_prices,
)


def estimate_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    capsys.readouterr()
    assert run_cli(["estimate", *args, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_estimate_from_assumptions_then_from_this_folders_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(
        tmp_path, [spender("paid", "mock-small", calls=small_calls(0.03)), "reference"], tasks=3
    )
    results = tmp_path / "results"
    common = [str(suite), "--results", str(results), "--prices", str(prices)]

    before = estimate_json(capsys, *common)
    assert not results.exists(), "an estimate writes nothing"
    paid, reference = before["variants"]
    assert paid["installed"] and paid["priced"] and paid["trials"] == paid["to_run"] == 3
    assert (paid["per_trial_low_usd"], paid["per_trial_high_usd"]) == (SMALL_LOW, SMALL_HIGH)
    assert (paid["total_low_usd"], paid["total_high_usd"]) == (0.24, 2.6625)
    assert paid["basis"] == "assumption"
    (model,) = paid["models"]
    assert model["record"] == "*/mock-small@origin"
    assert model["source"] == f"user config {prices} row 2"
    assert (reference["uses_model"], reference["total_high_usd"]) == (False, 0.0)
    assert before["total_high_usd"] == 2.6625
    assert before["long_run"]["cache_read"] == 3_000_000

    run_args = ["run", *common, "--max-usd", "0.05"]
    assert run_cli(run_args) == 0  # $0.03 then $0.06: the third trial is skipped

    after = estimate_json(capsys, *common)
    paid = after["variants"][0]
    assert paid["basis"] == "history" and "from 2 past trials" in paid["basis_detail"]
    assert (paid["per_trial_low_usd"], paid["per_trial_high_usd"]) == (0.03, 0.03)
    assert paid["to_run"] == 1 and paid["total_high_usd"] == 0.03
    # The cap still reserves and charges the assumed long run: history is cheaper than that.
    assert paid["high_estimate_usd"] == SMALL_HIGH
    assert after["spent_usd"] == 0.06

    capsys.readouterr()
    assert run_cli(["estimate", *common]) == 0
    table = capsys.readouterr().out
    assert "paid" in table and "from 2 past trials" in table and "Total: $0.03" in table


def test_estimate_names_an_unpriced_model_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = make_suite(tmp_path, [spender("odd", "mock-nobody")])
    found = estimate_json(capsys, str(suite), "--results", str(tmp_path / "results"))
    (odd,) = found["variants"]
    assert odd["models"][0]["record"] is None
    assert "unknown model 'mock-nobody'" in odd["models"][0]["unpriced"]
    assert "allow odd unpriced" in odd["problem"] and "--" not in odd["problem"]
    assert odd["fix"] == [
        {"name": "price_files", "value": "FILE"},
        {"name": "allow_unpriced", "value": "odd"},
    ]
    assert odd["total_high_usd"] is None
    assert found["left_out"] == ["odd"]

    capsys.readouterr()
    assert run_cli(["estimate", str(suite), "--results", str(tmp_path / "results")]) == 0
    table = " ".join(capsys.readouterr().out.split())
    assert "Total: unknown." in table
    assert "allow odd unpriced (--prices FILE, --allow-unpriced odd)" in table


def test_the_total_says_which_variants_it_leaves_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(
        tmp_path, [spender("paid", "mock-small", calls=small_calls(0.03)), spender("odd", "x")]
    )
    common = [str(suite), "--results", str(tmp_path / "results"), "--prices", str(prices)]
    found = estimate_json(capsys, *common)
    assert found["left_out"] == ["odd"] and found["total_high_usd"] > 0
    assert run_cli(["estimate", *common]) == 0
    assert "plus odd (unknown)." in capsys.readouterr().out


def test_run_refuses_an_unpriced_model_in_one_line_and_runs_it_when_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = make_suite(tmp_path, [spender("odd", "mock-nobody", calls=[{"input": 5}])])
    results = tmp_path / "results"
    capsys.readouterr()
    assert run_cli(["run", str(suite), "--results", str(results), "--max-usd", "1"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: cannot price odd: unknown model 'mock-nobody'")
    assert error.count("\n") == 1
    assert not (results / "trials").exists()

    allowed = ["run", str(suite), "--results", str(results), "--max-usd", "1"]
    assert run_cli([*allowed, "--allow-unpriced", "odd", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (trial,) = report["trials"]
    assert (trial["cost_source"], trial["charged_usd"]) == ("unpriced", 0.0)
    assert any("without a price" in note for note in report["notes"])


def test_run_without_max_usd_says_how_to_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(tmp_path, [spender("paid", "mock-small")])
    capsys.readouterr()
    code = run_cli(["run", str(suite), "--prices", str(prices), "--results", str(tmp_path / "r")])
    assert code == 2
    error = capsys.readouterr().err
    assert error.startswith("error: a spend cap is required: paid spends money on model tokens")
    assert "estimate what the run may cost" in error and error.endswith("(--max-usd USD)\n")
