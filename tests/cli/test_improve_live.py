"""Claude Code and Codex on the demo's two-round improvement task, offline, against the scripted
model, in bubblewrap with a network of its own: each round applies the next reference overlay
and asks the in-loop evaluator for the value from inside the sandbox (the loopback relay carries
it); round 2 resumes round 1's session (``session = "resume"``); the trial's tokens and cost are
the sums over its rounds, each round counting only its own calls."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harnessdrive.demo import DEMO_SUITE
from harnessdrive.demo.scripted import improving_script, model_for, scripted_prices
from harnessdrive.harnesses.cli.binaries import binary_variable
from harnessdrive.protocols.improve.evaluator import COMMAND_VARIABLE
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.improve_models import ImproveOverrides
from harnessdrive.tasks.loading import Task, load_suite
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.model_server import ModelServer, Script, Shell
from harnessdrive.transcript.models import Transcript, Usage
from tests.cli.conftest import cli_binary, endpoint_for
from tests.cli.test_demo_live import per_call

pytestmark = pytest.mark.cli

TASK = DEMO_SUITE / "tasks" / "fewer-comparisons"
CALLS_PER_ROUND = 2  # the overlay's and the evaluator's shell command, then the answer


# Each round the scripted model applies the next overlay and asks the evaluator for the value,
# through the command the prompt names (also in $HARNESSDRIVE_EVALUATE). The model server
# answers from the conversation alone: a resumed round 2 sees round 1's replies and so gets
# turns 2 and 3, where a fresh one would get turns 0 and 1 again.
def _measuring_script(task: Task, python: str) -> Script:
    [applying, answer] = improving_script(task, python).turns
    [apply] = applying.actions
    assert isinstance(apply, Shell)
    command = f'{apply.command} && eval "${COMMAND_VARIABLE}"'
    measuring = applying.model_copy(update={"actions": (Shell(command=command),)})
    return Script(turns=(measuring, answer) * 2)


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_a_real_cli_measures_in_the_loop_and_resumes_its_session(
    harness: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(binary_variable(harness), str(cli_binary(harness)))
    suite = load_suite(TASK)
    results = tmp_path / "results"
    with ModelServer() as server:
        server.mount(harness, _measuring_script(suite.tasks[0], sys.executable))
        variant = VariantSpec(
            harness=harness,
            name=harness,
            model=model_for(harness),
            options={"endpoint": endpoint_for(f"{server.base_url}/s/{harness}")},
            improve=ImproveOverrides(evaluator_budget=1, session="resume"),
        )
        options = RunOptions(
            results=results, jobs=1, network="loopback", price_records=scripted_prices()
        )
        execute(make_plan(suite, (variant,), 1), options)
        turns = [request.turn for request in server.turns(harness)]
    [path] = results.glob("trials/*/*/*/r*/result.json")
    result = TrialResult.model_validate_json(path.read_text())
    record = json.loads((path.parent / "improve.json").read_text())
    assert (result.status, result.outcome) == ("completed", "pass"), result.rounds
    curve = [result.metrics[f"improve.curve.{n}"] for n in range(3)]
    assert curve == [29367.0, 20741.0, 980.0]
    # The evaluator counted each call the CLI made from its sandbox, and measured its state.
    assert record["evaluator"] == [
        {"round": 1, "call": 1, "value": 20741.0, "refused": None, "error": None,
         "machinery": False},
        {"round": 2, "call": 1, "value": 980.0, "refused": None, "error": None,
         "machinery": False},
    ]  # fmt: skip
    assert "20741" in (path.parent / "transcript.json").read_text()
    # Round 2 continued round 1's conversation, under the session id round 1's log names.
    assert turns == [0, 1, 2, 3]
    session = Transcript.model_validate_json((path.parent / "transcript.json").read_text())
    assert session.session_id and [e["resumed"] for e in record["rounds"]] == [
        None,
        session.session_id,
    ]
    # Each round counts its own calls only, though the resumed log holds both rounds'.
    assert [r.agent.calls for r in result.rounds] == [CALLS_PER_ROUND] * 2
    each = sum([per_call(harness)] * CALLS_PER_ROUND, Usage())
    assert [r.agent.usage for r in result.rounds] == [each, each]
    assert result.totals.rounds == 2 and result.totals.usage == each + each
    assert result.cost.source == "computed" and result.cost.usd == 0.0
    priced = {model.model for model in result.cost.models}
    assert priced and all(round_.agent.model in priced for round_ in result.rounds)
