"""Retries for a provider's refusal for load: decided by what the proxy saw, never by a log;
every try's verdict kept; a graded fail never "not counted". And the backoff between tries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.errors import UserError
from harnessdrive.grading.verdict import Outcome
from harnessdrive.proxy import ProxiedCall, Traffic
from harnessdrive.running.concurrency import parse_limit
from harnessdrive.sandbox.process import StopToken
from harnessdrive.store.results import AgentSummary, RoundRecord, Status, TrialResult
from harnessdrive.transcript.models import Usage
from harnessdrive.trial.job import RetryPolicy
from harnessdrive.trial.rate_limits import refusal_seen, with_retries
from tests.trial_results import trial_result

LOG_429 = 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}'
QUICK = RetryPolicy(tries=3, base_seconds=0.001, max_seconds=0.002)


def _traffic(*statuses: int) -> Traffic:
    calls = tuple(
        ProxiedCall(
            method="POST",
            path="/v1/messages",
            generation=True,
            status=status,
            started=0.0,
            seconds=0.0,
            usage=Usage(input=1) if status == 200 else None,
        )
        for status in statuses
    )
    return Traffic.of("https://provider.example", calls)


def _try(
    status: Status, outcome: Outcome, traffic: Traffic | None, error: str | None = None
) -> TrialResult:
    agent = AgentSummary(exit_code=1, error=error, traffic=traffic)
    rounds = (RoundRecord(status=status, outcome=outcome, agent=agent),)
    return trial_result("t", "v", status=status, outcome=outcome, rounds=rounds)


def _tries(tmp_path: Path, results: list[TrialResult]) -> tuple[TrialResult, Iterator[int], Path]:
    """Run ``results`` as the tries of one trial; each try leaves a file naming its number."""
    artifacts = tmp_path / "trial"
    artifacts.mkdir()
    numbers = iter(range(1, len(results) + 1))
    queue = iter(results)

    def attempt() -> TrialResult:
        (artifacts / "try.txt").write_text(str(next(numbers)))
        return next(queue)

    return with_retries(attempt, artifacts, QUICK, StopToken()), numbers, artifacts


def test_a_429_in_the_agents_own_log_is_not_a_refusal(tmp_path: Path) -> None:
    # The agent printed a provider's refusal after failing; the proxy saw every call answered.
    failed = _try("crashed", "fail", _traffic(200, 200), error=LOG_429)
    result, numbers, _ = _tries(tmp_path, [failed, failed])
    assert (result.status, result.outcome, result.retries) == ("crashed", "fail", ())
    assert next(numbers) == 2  # tried once


def test_a_run_without_the_proxy_is_never_retried_whatever_it_printed(tmp_path: Path) -> None:
    unproxied = _try("crashed", "fail", None, error=LOG_429)
    assert refusal_seen(unproxied) is None


def test_a_pass_stands_even_when_the_provider_refused_at_the_end(tmp_path: Path) -> None:
    passed = _try("crashed", "pass", _traffic(200, 429))
    assert refusal_seen(passed) is None


def test_each_refused_tries_verdict_is_kept_and_a_fail_is_never_not_counted(
    tmp_path: Path,
) -> None:
    failed = _try("crashed", "fail", _traffic(200, 429))
    refused = _try("could_not_run", "not_graded", _traffic(429))
    result, _, artifacts = _tries(tmp_path, [failed, refused, refused])
    # The graded try is the one recorded, with its files; every try's verdict is kept.
    assert (result.status, result.outcome) == ("crashed", "fail")
    assert [(e.status, e.outcome) for e in result.retries] == [
        ("crashed", "fail"),
        ("could_not_run", "not_graded"),
        ("could_not_run", "not_graded"),
    ]
    assert all("HTTP 429" in e.detail for e in result.retries)
    assert (artifacts / "try.txt").read_text() == "1"
    assert sorted(p.name for p in (artifacts / "retries").iterdir()) == ["2", "3"]
    assert result.note is not None and result.note.startswith("try 1 is recorded")


def test_refused_before_any_answer_on_every_try_is_not_counted(tmp_path: Path) -> None:
    refused = _try("could_not_run", "not_graded", _traffic(429, 529))
    result, _, artifacts = _tries(tmp_path, [refused, refused, refused])
    assert (result.status, result.outcome) == ("could_not_run", "not_graded")
    assert len(result.retries) == 3
    assert "refused for load on all 3 tries" in (result.rounds[-1].agent.error or "")
    assert (artifacts / "try.txt").read_text() == "3"


def test_a_later_graded_try_is_recorded_after_refused_ones(tmp_path: Path) -> None:
    refused = _try("could_not_run", "not_graded", _traffic(503))
    passed = _try("completed", "pass", _traffic(200))
    result, _, artifacts = _tries(tmp_path, [refused, passed])
    assert (result.status, result.outcome) == ("completed", "pass")
    assert [e.outcome for e in result.retries] == ["not_graded"]
    assert (artifacts / "retries" / "1" / "try.txt").read_text() == "1"


def test_the_pause_doubles_up_to_the_most_with_jitter_between_half_and_all() -> None:
    policy = RetryPolicy(tries=5, base_seconds=2, max_seconds=10)
    assert [policy.pause(n, 1.0) for n in (1, 2, 3, 4)] == [2, 4, 8, 10]
    assert [policy.pause(n, 0.0) for n in (1, 2, 3, 4)] == [1, 2, 4, 5]


@pytest.mark.parametrize("text", ["claude-code", "x=", "=2", "x=0", "x=two"])
def test_a_bad_limit_is_refused(text: str) -> None:
    with pytest.raises(UserError, match="expected NAME=N"):
        parse_limit(text)


def test_a_limit_names_what_it_counts() -> None:
    assert parse_limit(" provider:anthropic = 3") == ("provider:anthropic", 3)
