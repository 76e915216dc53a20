"""--max-usd: counted spend across reruns, skipped trials, reservations, high estimates."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from harnessdrive.report.scoreboard import build_report
from harnessdrive.store.store import Store
from tests.integration.spending import (
    SMALL_HIGH,
    SMALL_LOW,
    make_suite,
    result_json,
    run_suite,
    small_calls,
    spender,
    write_prices,
)
from tests.trial_results import trial_folder
from tests.waiting import wait_until


def counted(results: Path) -> float:
    store = Store(results)
    try:
        return round(store.charged_total(), 6)
    finally:
        store.close()


def test_a_cap_that_fits_part_of_a_suite_skips_the_rest_then_a_higher_cap_runs_only_those(
    tmp_path: Path,
) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(tmp_path, [spender("paid", "mock-small", calls=small_calls(0.30))], tasks=4)
    results = tmp_path / "results"

    first = run_suite(suite, results, prices=prices, max_usd=0.5)
    statuses = [r.status for r in first.trials]
    assert statuses == ["completed", "completed", "skipped", "skipped"]
    # The second trial started at $0.30 < $0.50 and took the count past the cap by less than one
    # high estimate; nothing started after that.
    assert counted(results) == 0.60 <= 0.5 + SMALL_HIGH
    skipped = result_json(results, "suite/t2/paid/r1")
    assert "spend cap reached: $0.60 counted of the $0.5 cap" in skipped["note"]
    assert skipped["cost"]["charged_usd"] == 0
    # Each trial was offered what was left under the cap.
    offered = [
        json.loads((trial_folder(results, f"suite/t{i}/paid/r1") / "spender.json").read_text())
        for i in (0, 1)
    ]
    assert [o["budget_usd"] for o in offered] == [0.5, 0.2]
    assert first.spend is not None and "2 trial(s) skipped at the cap" in first.spend

    done_before = {
        i: (trial_folder(results, f"suite/t{i}/paid/r1") / "result.json").read_bytes()
        for i in (0, 1)
    }
    second = run_suite(suite, results, prices=prices, max_usd=2)
    assert [r.status for r in second.trials] == ["completed"] * 4
    assert second.ran == 2 and second.already_done == 2
    for i, data in done_before.items():
        assert (trial_folder(results, f"suite/t{i}/paid/r1") / "result.json").read_bytes() == data
    assert [r.attempt for r in second.trials] == [1, 1, 2, 2]
    assert counted(results) == 1.20


def test_concurrent_trials_reserve_their_high_estimate(tmp_path: Path) -> None:
    # Each trial costs $0.80; the high estimate (assumed long run on mock-small) is $0.8875.
    # With 4 jobs and a $1 cap, only two may be under way; the second finishes past the cap,
    # and the other two never start. Without reservations all four would run: $3.20.
    prices = write_prices(tmp_path)
    suite = make_suite(
        tmp_path, [spender("paid", "mock-small", calls=small_calls(0.80), seconds=0.3)], tasks=4
    )
    results = tmp_path / "results"
    summary = run_suite(suite, results, prices=prices, max_usd=1.0, jobs=4)
    assert sorted(r.status for r in summary.trials) == ["completed"] * 2 + ["skipped"] * 2
    assert counted(results) == 1.60 <= 1.0 + SMALL_HIGH
    budgets = sorted(
        json.loads(path.read_text())["budget_usd"]
        for path in results.glob("trials/**/spender.json")
    )
    assert budgets == [pytest.approx(1.0 - SMALL_HIGH), 1.0]


def test_a_trial_cut_off_without_a_usage_record_is_charged_the_high_estimate(
    tmp_path: Path,
) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(
        tmp_path,
        [
            spender("silent", "mock-small", hang=True),
            spender("chatty", "mock-small", hang=True, partial_calls=small_calls(0.05)),
        ],
    )
    results = tmp_path / "results"
    summary = run_suite(suite, results, prices=prices, max_usd=10, agent_timeout=0.5)
    silent = result_json(results, "suite/t0/silent/r1")
    assert silent["status"] == "timeout"
    cost = silent["cost"]
    assert (cost["source"], cost["usd"], cost["charged_usd"]) == (
        "estimated",
        SMALL_HIGH,
        SMALL_HIGH,
    )
    assert cost["estimate"]["basis"] == "assumption"
    assert (cost["estimate"]["low_usd"], cost["estimate"]["high_usd"]) == (SMALL_LOW, SMALL_HIGH)
    assert "cut off without a usage record: charged the high estimate" in cost["note"]

    chatty = result_json(results, "suite/t0/chatty/r1")["cost"]
    assert (chatty["source"], chatty["usd"], chatty["partial"]) == ("computed", 0.05, True)

    rows = {row.variant: row for row in build_report(summary.trials).harnesses}
    assert rows["silent"].unmeasured == 1 and rows["chatty"].unmeasured == 1


def test_a_finished_run_that_logged_no_usage_is_charged_the_high_estimate(tmp_path: Path) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(
        tmp_path,
        [spender("mute", "mock-small"), spender("nologin", "mock-small", could_not_run=True)],
    )
    results = tmp_path / "results"
    run_suite(suite, results, prices=prices, max_usd=10)
    mute = result_json(results, "suite/t0/mute/r1")["cost"]
    assert (mute["source"], mute["usd"], mute["charged_usd"]) == ("unmeasured", None, SMALL_HIGH)
    nologin = result_json(results, "suite/t0/nologin/r1")
    assert nologin["status"] == "could_not_run"
    assert (nologin["cost"]["source"], nologin["cost"]["charged_usd"]) == ("none", 0)


def test_past_trials_dearer_than_the_assumed_long_run_raise_the_high_estimate(
    tmp_path: Path,
) -> None:
    prices = write_prices(tmp_path)
    results = tmp_path / "results"
    cheap = make_suite(tmp_path, [spender("paid", "mock-small", calls=small_calls(0.02))], name="a")
    run_suite(cheap, results, prices=prices, max_usd=5)
    # History says $0.02 a trial, but the cap never charges less than the assumed long run.
    later = make_suite(tmp_path, [spender("paid", "mock-small", hang=True)], name="b")
    run_suite(later, results, prices=prices, max_usd=5, agent_timeout=0.5)
    cost = result_json(results, "b/t0/paid/r1")["cost"]
    assert (cost["charged_usd"], cost["estimate"]["basis"]) == (SMALL_HIGH, "assumption")
    # A past trial dearer than that sets the high estimate from history.
    dear = make_suite(tmp_path, [spender("paid", "mock-small", calls=small_calls(1.2))], name="c")
    run_suite(dear, results, prices=prices, max_usd=5)
    again = make_suite(tmp_path, [spender("paid", "mock-small", hang=True)], name="d")
    run_suite(again, results, prices=prices, max_usd=5, agent_timeout=0.5)
    cost = result_json(results, "d/t0/paid/r1")["cost"]
    assert (cost["source"], cost["charged_usd"]) == ("estimated", 1.2)
    assert cost["estimate"]["basis"] == "history"
    assert cost["estimate"]["detail"] == "from 2 past trials of this harness and model"
    assert cost["estimate"]["low_usd"] == 0.02


@pytest.mark.slow
def test_the_in_flight_record_of_a_killed_driver_charges_the_high_estimate(
    tmp_path: Path,
) -> None:
    prices = write_prices(tmp_path)
    suite = make_suite(tmp_path, [spender("paid", "mock-small", hang=True)])
    results = tmp_path / "results"
    command = [
        sys.executable, "-m", "harnessdrive.cli", "run", str(suite), "--results", str(results),
        "--prices", str(prices), "--max-usd", "0.5", "--sandbox", "none",
    ]  # fmt: skip
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        (inflight,) = wait_until(
            lambda: list(results.glob("inflight/*.json")), "the trial in flight", process=driver
        )
        interrupted = json.loads(inflight.read_text())["interrupted"]
        assert interrupted["cost"]["charged_usd"] == SMALL_HIGH
        assert interrupted["cost"]["source"] == "estimated"
    finally:
        # The agent's sleep outlives a killed driver: end it too, by its id.
        agents = psutil.Process(driver.pid).children(recursive=True)
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        for process in agents:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
    # The next command records it as interrupted and counts the estimate: $0.8875 >= $0.50, so
    # the trial is not run again; it is skipped with the reason.
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    previous = result_json(results, "suite/t0/paid/r1/previous/1")
    assert (previous["status"], previous["cost"]["charged_usd"]) == ("interrupted", SMALL_HIGH)
    assert result_json(results, "suite/t0/paid/r1")["status"] == "skipped"
    assert counted(results) == SMALL_HIGH
