"""Concurrency limits whatever --jobs says, and a provider's rate limit retried, not failed."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import tomli_w

from harnessdrive.running.run import RunSummary
from harnessdrive.store.results import TrialResult
from harnessdrive.testing.agents import RATE_LIMIT_ANSWER
from harnessdrive.trial.job import RetryPolicy
from tests.integration.spending import make_suite, run_suite, small_calls, spender, write_prices
from tests.trial_results import trial_folder

AT_MOCKCO = [{"model": "mock-small", "provider": "mockco"}]
QUICK_RETRIES = RetryPolicy(tries=3, base_seconds=0.05, max_seconds=0.2)


def folder_of(results: Path, result: TrialResult) -> Path:
    planned = f"{result.suite}/{result.task}/{result.variant_label}/r{result.repetition}"
    return trial_folder(results, planned)


def spans(results: Path, summary: RunSummary, labels: set[str]) -> list[tuple[float, float]]:
    found = []
    for result in summary.trials:
        if result.variant_label in labels:
            log = json.loads((folder_of(results, result) / "spender.json").read_text())
            found.append((log["began"], log["ended"]))
    return found


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    edges = sorted([(b, 1) for b, _ in intervals] + [(e, -1) for _, e in intervals])
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return peak


def test_provider_and_harness_limits_hold_whatever_jobs_says(tmp_path: Path) -> None:
    prices = write_prices(tmp_path)
    variants = [
        spender("a", "mock-small", seconds=0.6, models=AT_MOCKCO),
        spender("b", "mock-small", seconds=0.6, models=AT_MOCKCO),
        spender("c", "mock-small", seconds=0.6),
    ]
    suite = make_suite(tmp_path, variants, tasks=3)
    # The suite caps the harness at two at once; the command line caps the provider at one.
    spec = tomllib.loads((suite / "suite.toml").read_text())
    spec["concurrency"] = {"harnessdrive.testing.agents:SpendingAgent": 2}
    (suite / "suite.toml").write_text(tomli_w.dumps(spec))
    results = tmp_path / "results"
    summary = run_suite(
        suite, results, prices=prices, max_usd=10, jobs=6, limits={"provider:mockco": 1}
    )
    assert [r.status for r in summary.trials] == ["completed"] * 9
    assert most_at_once(spans(results, summary, {"a", "b"})) == 1
    assert most_at_once(spans(results, summary, {"a", "b", "c"})) <= 2


def test_a_rate_limited_answer_is_retried_with_backoff_and_recorded_not_failed(
    tmp_path: Path,
) -> None:
    prices = write_prices(tmp_path)
    variants = [
        spender("flaky", "mock-small", calls=small_calls(0.01), rate_limited=2),
        spender("refused", "mock-small", calls=small_calls(0.01), rate_limited=5),
    ]
    suite = make_suite(tmp_path, variants, tasks=1)
    results = tmp_path / "results"
    summary = run_suite(suite, results, prices=prices, max_usd=10, retry=QUICK_RETRIES)
    flaky, refused = summary.trials
    assert (flaky.status, flaky.outcome) == ("completed", "pass")
    assert [e.reason for e in flaky.retries] == ["rate_limited"] * 2
    assert all("with HTTP 429" in e.detail for e in flaky.retries)
    assert {(e.status, e.outcome) for e in flaky.retries} == {("could_not_run", "not_graded")}
    first, second = (e.waited_seconds for e in flaky.retries)
    assert 0.025 <= first <= 0.05 and 0.05 <= second <= 0.1  # doubled, with jitter
    assert flaky.cost.charged_usd == 0.01
    folder = folder_of(results, flaky)
    for number in (1, 2):
        kept = folder / "retries" / str(number) / "agent.stderr"
        assert kept.read_text().strip() == RATE_LIMIT_ANSWER
    assert (folder / "agent.stdout").read_text() == "spent some tokens\n"
    # Refused on every try: recorded as unable to run, never as the agent failing the task.
    assert (refused.status, refused.outcome) == ("could_not_run", "not_graded")
    assert len(refused.retries) == 3
    assert refused.note is not None and "rate-limited by the provider" in refused.note
    assert "refused for load on all 3 tries" in (refused.agent.error or "")
    recorded = json.loads((folder_of(results, refused) / "result.json").read_text())
    assert [e["reason"] for e in recorded["retries"]] == ["rate_limited"] * 3
