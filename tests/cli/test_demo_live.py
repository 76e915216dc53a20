"""``harnessdrive demo --harness <cli>`` with each real CLI, offline, through the command line.

harnessdrive starts the scripted model itself; its script for each task is the task's reference
solution as edits, then the visible tests, then an answer (for the improvement task, each round's
reference overlay). Every trial must pass, and its usage must be exactly what the script reports
for the calls the CLI made.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.demo.scripted import TURN_USAGE
from harnessdrive.harnesses.cli.binaries import binary_variable
from harnessdrive.store.results import TrialResult
from harnessdrive.transcript.models import Transcript, Usage
from tests.cli.conftest import PINS, cli_binary, transcript_usage

pytestmark = pytest.mark.cli

IMPROVE_TASK = "fewer-comparisons"
# A differential task: no visible tests to run, so the script is the edits and an answer.
DIFFERENTIAL_TASK = "skiplist"
# Every CLI runs one task of each kind that scripts it alike: the four bug-fix tasks share one
# script shape (test_parsers.py checks each task's script reproduces its solution). The README's
# example, `demo --harness claude,codex`, runs as one demo run, the improvement task too (each
# round's script is one shell command, and aider never runs a command the model suggests, so
# aider cannot improve it).
README_PAIR = ("claude", "codex")
SOME_TASKS = {"amount-parsing", DIFFERENTIAL_TASK}
# Chat Completions and Gemini have no cache-write field: a client sees those tokens as input.
FOLDS_CACHE_WRITE = {"gemini", "opencode", "pi", "qwen", "aider", "mini-swe-agent"}
# aider makes one call (the edits) and runs the tests itself; the others make three.
CALLS = {"aider": 1}
CALLS_PER_ROUND = 2  # an improvement round: the overlay's shell command, then the answer


def per_call(harness: str) -> Usage:
    usage = transcript_usage(TURN_USAGE)
    if harness in FOLDS_CACHE_WRITE:
        folded = {"input": usage.input + usage.cache_write, "cache_write": 0}
        usage = usage.model_copy(update=folded)
    if harness == "pi":  # pi keeps no separate count of reasoning tokens
        usage = usage.model_copy(update={"reasoning": 0})
    return usage


def run_demo(
    harnesses: Sequence[str],
    tasks: set[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> list[tuple[TrialResult, Path]]:
    """``harnessdrive demo --harness ... --task ...``; every trial it recorded, read back."""
    for harness in harnesses:
        monkeypatch.setenv(binary_variable(harness), str(cli_binary(harness)))
    results = tmp_path / "results"
    args = ["--harness", ",".join(harnesses), "--task", ",".join(sorted(tasks))]
    code = run_cli(["demo", *args, "--results", str(results), "--json"])

    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["suite"] == "demo"
    trials = [
        (TrialResult.model_validate_json(path.read_text()), path.parent)
        for path in sorted(results.glob("trials/*/*/*/r*/result.json"))
    ]
    assert sorted((result.task, result.variant_label) for result, _ in trials) == sorted(
        (task, harness) for task in tasks for harness in harnesses
    )
    return trials


def check_solved(result: TrialResult, folder: Path) -> None:
    """A bug-fix or differential trial: passed, with exactly the calls the script made."""
    harness = result.variant_label
    calls = CALLS.get(harness, 2 if result.task == DIFFERENTIAL_TASK else 3)
    assert (result.status, result.outcome) == ("completed", "pass"), (result.task, result.agent)
    assert result.agent.calls == calls
    assert result.agent.usage == sum([per_call(harness)] * calls, Usage())
    transcript = Transcript.model_validate_json((folder / "transcript.json").read_text())
    assert {call.provider for call in transcript.calls} == {"scripted"}
    assert transcript.session_log is not None
    assert (folder / transcript.session_log).is_file()
    if result.task == DIFFERENTIAL_TASK:
        assert result.grading is not None and result.grading.score == 1.0
        return
    # The visible tests ran in the agent's workspace (aider runs them itself).
    assert any(e.kind == "command" and "pytest" in e.text for e in transcript.events)


def check_improved(result: TrialResult) -> None:
    """The two-round improvement trial: each round a fresh CLI run applying the next reference
    overlay; the trial's tokens and cost are the sums over its rounds."""
    assert (result.status, result.outcome) == ("completed", "pass"), result.rounds
    curve = [result.metrics[f"improve.curve.{n}"] for n in range(3)]
    assert curve == [29367.0, 20741.0, 980.0]
    assert [r.agent.calls for r in result.rounds] == [CALLS_PER_ROUND] * 2
    each = sum([per_call(result.variant_label)] * CALLS_PER_ROUND, Usage())
    assert [r.agent.usage for r in result.rounds] == [each, each]
    assert result.totals.rounds == 2 and result.totals.usage == each + each
    assert result.cost.source == "computed" and result.cost.usd == 0.0
    priced = {model.model for model in result.cost.models}
    assert priced and all(round_.agent.model in priced for round_ in result.rounds)


def test_the_readme_demo_runs_claude_and_codex_side_by_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = SOME_TASKS | {IMPROVE_TASK}
    trials = run_demo(README_PAIR, tasks, tmp_path, monkeypatch, capsys)
    for result, folder in trials:
        if result.task == IMPROVE_TASK:
            check_improved(result)
        else:
            check_solved(result, folder)


@pytest.mark.parametrize("harness", sorted(set(PINS) - set(README_PAIR)))
def test_demo_with_a_real_cli(
    harness: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for result, folder in run_demo([harness], SOME_TASKS, tmp_path, monkeypatch, capsys):
        check_solved(result, folder)
