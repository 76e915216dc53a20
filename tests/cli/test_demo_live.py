"""``harnessdrive demo --harness <cli>`` with each real CLI, offline, through the command line.

harnessdrive starts the scripted model itself; its script for each task is the task's reference
solution as edits, then the visible tests, then an answer. Every demo task must pass, and every
trial's usage must be exactly what the script reports for the calls the CLI made.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.demo.scripted import TURN_USAGE
from harnessdrive.harnesses.cli.binaries import binary_variable
from harnessdrive.store.results import TrialResult
from harnessdrive.transcript.models import Transcript, Usage
from tests.cli.conftest import PINS, cli_binary, transcript_usage

pytestmark = pytest.mark.cli

DEMO_TASKS = {"amount-parsing", "bad-row-errors", "top-products", "weekly-totals"}
# Its rounds are checked in test_improve_live.py. Each round's script is one shell command,
# and aider never runs a command the model suggests, so aider cannot improve it.
IMPROVE_TASK = "fewer-comparisons"
# A differential task: no visible tests to run, so the script is the edits and an answer.
DIFFERENTIAL_TASK = "skiplist"
# The README's example runs the whole demo; every other CLI runs one task of each kind that
# scripts it alike (test_parsers.py checks each task's script reproduces its solution).
WHOLE_DEMO = {"claude", "codex"}
SOME_TASKS = {"amount-parsing", DIFFERENTIAL_TASK}
# Chat Completions and Gemini have no cache-write field: a client sees those tokens as input.
FOLDS_CACHE_WRITE = {"gemini", "opencode", "pi", "qwen", "aider", "mini-swe-agent"}
# aider makes one call (the edits) and runs the tests itself; the others make three.
CALLS = {"aider": 1}


def per_call(harness: str) -> Usage:
    usage = transcript_usage(TURN_USAGE)
    if harness in FOLDS_CACHE_WRITE:
        folded = {"input": usage.input + usage.cache_write, "cache_write": 0}
        usage = usage.model_copy(update=folded)
    if harness == "pi":  # pi keeps no separate count of reasoning tokens
        usage = usage.model_copy(update={"reasoning": 0})
    return usage


@pytest.mark.parametrize("harness", sorted(PINS))
def test_demo_with_a_real_cli(
    harness: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(binary_variable(harness), str(cli_binary(harness)))
    results = tmp_path / "results"

    tasks = [] if harness in WHOLE_DEMO else ["--task", ",".join(SOME_TASKS)]
    code = run_cli(["demo", "--harness", harness, *tasks, "--results", str(results), "--json"])

    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["suite"] == "demo"
    trials = [
        (TrialResult.model_validate_json(path.read_text()), path.parent)
        for path in sorted(results.glob("trials/*/*/*/r*/result.json"))
    ]
    expected = DEMO_TASKS | {IMPROVE_TASK, DIFFERENTIAL_TASK}
    assert {result.task for result, _ in trials} == (
        expected if harness in WHOLE_DEMO else SOME_TASKS
    )
    for result, _ in trials:
        if result.task == IMPROVE_TASK:
            assert result.outcome == ("fail" if harness == "aider" else "pass")
    for result, folder in trials:
        if result.task == IMPROVE_TASK:
            continue
        calls = CALLS.get(harness, 2 if result.task == DIFFERENTIAL_TASK else 3)
        assert (result.status, result.outcome) == ("completed", "pass"), (result.task, result.agent)
        assert result.variant_label == harness
        assert result.agent.calls == calls
        assert result.agent.usage == sum([per_call(harness)] * calls, Usage())
        transcript = Transcript.model_validate_json((folder / "transcript.json").read_text())
        assert {call.provider for call in transcript.calls} == {"scripted"}
        assert transcript.session_log is not None
        assert (folder / transcript.session_log).is_file()
        if result.task == DIFFERENTIAL_TASK:
            assert result.grading is not None and result.grading.score == 1.0
            continue
        # The visible tests ran in the agent's workspace (aider runs them itself).
        assert any(e.kind == "command" and "pytest" in e.text for e in transcript.events)
