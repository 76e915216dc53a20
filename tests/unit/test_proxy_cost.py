"""The proxy's token count beside the CLI's log in a trial's cost: kept, and flagged apart."""

from __future__ import annotations

import pytest

from harnessdrive.accounting.trial_cost import with_proxy_count
from harnessdrive.harnesses.base import AgentRun
from harnessdrive.proxy import ProxiedCall, Traffic
from harnessdrive.store.results import Cost
from harnessdrive.transcript.models import ModelCall, Transcript, Usage

SEEN = Usage(input=1000, cache_read=5000, output=400)


def _run(logged: Usage | None, traffic: bool = True) -> AgentRun:
    calls = () if logged is None else (ModelCall(model="m", usage=logged),)
    answered = ProxiedCall(
        method="POST",
        path="/v1/messages",
        generation=True,
        status=200,
        started=0.0,
        seconds=1.0,
        usage=SEEN,
    )
    return AgentRun(
        exit_code=0,
        timed_out=False,
        seconds=1.0,
        transcript=Transcript(calls=calls),
        traffic=Traffic.of("https://api.example", (answered,)) if traffic else None,
    )


@pytest.mark.parametrize(
    ("logged", "flagged"),
    [
        (SEEN, False),
        (Usage(input=1000, cache_read=5000, output=390), False),  # 10 of 6,400 apart: within 2%
        (Usage(input=1000, cache_read=5000, output=100), True),  # the log left output out
        (Usage(input=6000, output=400), True),  # the same total, in other tiers
        (None, True),  # the log has no calls at all
    ],
)
def test_a_disagreement_with_the_log_is_flagged(logged: Usage | None, flagged: bool) -> None:
    cost = with_proxy_count(Cost(usd=1.0, source="computed"), _run(logged))
    assert cost.proxy_usage == SEEN
    assert cost.usage_mismatch is flagged
    assert (cost.note is not None and "the proxy counted 6,400 tokens" in cost.note) is flagged


def test_a_run_that_bypassed_the_proxy_has_no_second_count() -> None:
    cost = with_proxy_count(Cost(usd=1.0, source="computed"), _run(SEEN, traffic=False))
    assert (cost.proxy_usage, cost.usage_mismatch) == (None, False)
