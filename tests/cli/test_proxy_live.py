"""Real CLIs through the model proxy: the provider's own 429s are retried and recorded; a 429
the agent merely prints after failing is graded ``fail``, not retried, not "could not run"."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.proxy import CALLS_FILE, ProxiedCall
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.model_server import ModelServer, Script, Turn, WriteFile
from harnessdrive.trial.job import RetryPolicy
from tests.cli.conftest import cli_binary, endpoint_for, run_trials
from tests.conftest import ADD_FIXED, add_task

pytestmark = pytest.mark.cli

QUICK = RetryPolicy(tries=3, base_seconds=0.01, max_seconds=0.02)
PRINTED_429 = (
    'API Error: 429 {"type":"error","error":{"type":"rate_limit_error",'
    '"message":"Number of requests has exceeded your rate limit"}}'
)


def _claude(root: str) -> VariantSpec:
    return VariantSpec(
        harness="claude",
        name="claude",
        model="claude-sonnet-4-5",
        options={"binary": str(cli_binary("claude")), "endpoint": endpoint_for(root)},
    )


def test_the_providers_429s_are_retried_and_each_try_kept(tmp_path: Path) -> None:
    solve = Script(
        turns=(
            Turn(text="Fixing.", actions=(WriteFile(path="calc.py", content=ADD_FIXED),)),
            Turn(text="Done."),
        ),
        refusals=(429, 529),  # the endpoint sets no retries: the CLI gives up at the first
    )
    with ModelServer(solve) as server:
        _, records = run_trials(
            tmp_path, [add_task()], [_claude(server.base_url)], retry=QUICK, max_usd=1.0
        )
    (record,) = records
    result = record.result
    assert (result.status, result.outcome) == ("completed", "pass"), result.agent
    assert [e.reason for e in result.retries] == ["rate_limited", "rate_limited"]
    assert "HTTP 429" in result.retries[0].detail and "HTTP 529" in result.retries[1].detail
    assert all((e.status, e.outcome) == ("could_not_run", "not_graded") for e in result.retries)
    for number, status in ((1, 429), (2, 529)):
        kept = (record.folder / "retries" / str(number) / CALLS_FILE).read_text().splitlines()
        assert {ProxiedCall.model_validate_json(line).status for line in kept} == {status}
    traffic = result.agent.traffic
    assert traffic is not None and traffic.reached_model and traffic.last_status == 200


def test_a_429_the_agent_prints_after_failing_is_graded_fail(tmp_path: Path) -> None:
    broken = "def add(a, b):\n    return 0\n"
    dodge = Script(
        turns=(
            Turn(text="Changing it.", actions=(WriteFile(path="calc.py", content=broken),)),
            Turn(text=PRINTED_429),
        )
    )
    with ModelServer(dodge) as server:
        _, records = run_trials(
            tmp_path, [add_task()], [_claude(server.base_url)], retry=QUICK, max_usd=1.0
        )
    (record,) = records
    result = record.result
    assert (result.status, result.outcome, result.retries) == ("completed", "fail", ())
    printed = (record.folder / "agent.stdout").read_text()
    assert "API Error: 429" in printed and "rate_limit_error" in printed
    traffic = result.agent.traffic
    assert traffic is not None and traffic.statuses.keys() == {"200"}
