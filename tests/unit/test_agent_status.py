"""The machinery's status of a run: "could not run" only on evidence from outside the sandbox."""

from __future__ import annotations

import pytest

from harnessdrive.harnesses.base import AgentRun
from harnessdrive.protocols.single import agent_status
from harnessdrive.proxy import ProxiedCall, Traffic
from harnessdrive.transcript.models import Usage


def _traffic(*statuses: int | None) -> Traffic:
    calls = tuple(
        ProxiedCall(
            method="POST",
            path="/v1/messages",
            generation=True,
            status=status,
            started=0.0,
            seconds=0.1,
            usage=Usage(input=5, output=5) if status == 200 else None,
        )
        for status in statuses
    )
    return Traffic.of("https://api.example", calls)


def _run(exit_code: int | None = 1, **fields: object) -> AgentRun:
    return AgentRun(exit_code=exit_code, timed_out=False, seconds=1, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("run", "status"),
    [
        (_run(0), "completed"),
        (AgentRun(exit_code=None, timed_out=True, seconds=1), "timeout"),
        (_run(-15, stopped=True), "interrupted"),
        # Exiting with an error is no evidence that it never worked: graded.
        (_run(1), "crashed"),
        # A model answered: graded, whatever the exit status.
        (_run(1, traffic=_traffic(200)), "crashed"),
        (_run(0, traffic=_traffic(429, 200)), "completed"),
        (_run(1, traffic=_traffic(200, 429)), "crashed"),
        # The proxy saw no answer: no request, a refused key, refusals for load, no provider.
        (_run(1, traffic=_traffic()), "could_not_run"),
        (_run(0, traffic=_traffic(401)), "could_not_run"),
        (_run(1, traffic=_traffic(429, 529)), "could_not_run"),
        (_run(1, traffic=_traffic(None)), "could_not_run"),
        (AgentRun(exit_code=None, timed_out=True, seconds=1, traffic=_traffic()), "could_not_run"),
        # Known before the process started (no executable), or a scripted agent's own word.
        (_run(None, could_not_run=True), "could_not_run"),
        # Stopped by a sandbox limit: it did work, so it is graded and never retried.
        (_run(-9, limit="processes", traffic=_traffic()), "crashed"),
    ],
)
def test_status_rules(run: AgentRun, status: str) -> None:
    assert agent_status(run) == status
