"""Which log lines read as a provider refusing for load, and the backoff between tries."""

from __future__ import annotations

import pytest

from harnessdrive.errors import UserError
from harnessdrive.executors.base import RetryPolicy
from harnessdrive.running.concurrency import parse_limit
from harnessdrive.running.rate_limits import REFUSAL

REFUSALS = [
    'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"..."}}',
    'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    "ERROR: exceeded retry limit, last status: 429 Too Many Requests",
    "[API Error: got status: RESOURCE_EXHAUSTED. Quota exceeded for requests per minute]",
    "litellm.RateLimitError: Rate limit reached for gpt-x in organization org-1",
    "Error: HTTP 429",
]
NOT_REFUSALS = [
    "processed 429 files",
    "test_rate_limiter.py::test_window PASSED",
    "the function limits the rate at which it reads",
    "FAILED tests/test_calc.py::test_add - assert 4 == 3",
]


@pytest.mark.parametrize("line", REFUSALS)
def test_a_providers_refusal_for_load_is_recognised(line: str) -> None:
    assert REFUSAL.search(line)


@pytest.mark.parametrize("line", NOT_REFUSALS)
def test_ordinary_output_is_not_taken_for_a_refusal(line: str) -> None:
    assert REFUSAL.search(line) is None


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
