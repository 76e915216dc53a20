"""Claude Code and Codex on the demo's two-round improvement task, offline, against the scripted
model: each round is a fresh CLI run that applies the next reference overlay, and the trial's
tokens and cost are the sums over its rounds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harnessdrive.demo import DEMO_SUITE
from harnessdrive.demo.scripted import scripted_demo, scripted_prices
from harnessdrive.harnesses.cli.binaries import binary_variable
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import load_suite
from harnessdrive.transcript.models import Usage
from tests.cli.conftest import cli_binary
from tests.cli.test_demo_live import per_call

pytestmark = pytest.mark.cli

TASK = DEMO_SUITE / "tasks" / "fewer-comparisons"
CALLS_PER_ROUND = 2  # the overlay's shell command, then the answer


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_a_real_cli_improves_round_by_round(
    harness: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(binary_variable(harness), str(cli_binary(harness)))
    suite = load_suite(TASK)
    results = tmp_path / "results"
    with scripted_demo(suite, [harness], python=sys.executable) as variants:
        options = RunOptions(
            results=results, jobs=1, network="loopback", price_records=scripted_prices()
        )
        execute(make_plan(suite, variants, 1), options)
    [path] = results.glob("trials/*/*/*/r*/result.json")
    result = TrialResult.model_validate_json(path.read_text())
    assert (result.status, result.outcome) == ("completed", "pass"), result.rounds
    curve = [result.metrics[f"improve.curve.{n}"] for n in range(3)]
    assert curve == [29367.0, 20741.0, 980.0]
    assert [r.agent.calls for r in result.rounds] == [CALLS_PER_ROUND] * 2
    each = sum([per_call(harness)] * CALLS_PER_ROUND, Usage())
    assert [r.agent.usage for r in result.rounds] == [each, each]
    assert result.totals.rounds == 2 and result.totals.usage == each + each
    assert result.cost.source == "computed" and result.cost.usd == 0.0
    priced = {model.model for model in result.cost.models}
    assert priced and all(round_.agent.model in priced for round_ in result.rounds)
