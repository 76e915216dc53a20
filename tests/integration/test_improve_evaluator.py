"""The in-loop evaluator against an agent that tries to cheat it: its calls past the budget are
refused and recorded, it never finds the objective's files, and neither its fake objective nor
the module it plants beside it changes what is measured."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.demo import DEMO_SUITE
from harnessdrive.store.results import TrialResult
from tests.trial_results import trial_folder

# One worker runs the module, so its shared fixtures are built once (tests/conftest.py).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("improve-evaluator")]

ROUND1 = 20741.0  # the demo task's first overlay, measured honestly
REFUSED = "refused: the budget of 2 measurement(s) per round is spent"


@pytest.fixture(scope="module")
def abused(tmp_path_factory: pytest.TempPathFactory) -> Path:
    suite = tmp_path_factory.mktemp("evaluator") / "suite"
    shutil.copytree(DEMO_SUITE / "improve-project", suite / "improve-project")
    task = suite / "tasks" / "fewer-comparisons"
    shutil.copytree(DEMO_SUITE / "tasks" / "fewer-comparisons", task)
    # The task has two rounds and no evaluator; the variant overrides both.
    (suite / "suite.toml").write_text(
        'name = "abuse"\n[[variants]]\n'
        'harness = "harnessdrive.testing.improvers:EvaluatorAbuser"\nname = "abuser"\n'
        "options = { calls = 4 }\nimprove = { rounds = 1, evaluator_budget = 2 }\n"
    )
    results = suite.parent / "results"
    assert run_cli(["run", str(suite), "--results", str(results)]) == 0
    return trial_folder(results, "abuse/fewer-comparisons/abuser/r1")


def test_calls_past_the_budget_are_refused_and_recorded(abused: Path) -> None:
    seen = json.loads((abused / "abuser.json").read_text())
    assert seen["answers"] == ["20741", "20741", REFUSED, REFUSED]
    record = json.loads((abused / "improve.json").read_text())
    assert [(c["call"], c["value"], c["refused"]) for c in record["evaluator"]] == [
        (1, ROUND1, None),
        (2, ROUND1, None),
        (3, None, REFUSED.removeprefix("refused: ")),
        (4, None, REFUSED.removeprefix("refused: ")),
    ]
    assert len(record["rounds"]) == 1 and record["rounds"][0]["evaluator_calls"] == 4
    result = TrialResult.model_validate_json((abused / "result.json").read_text())
    assert result.metrics["improve.evaluator_calls"] == 4
    assert result.metrics["improve.evaluator_refused"] == 2
    prompt = (abused / "prompt.md").read_text()
    assert "You may measure your current state with `" in prompt and " -I " in prompt
    assert "at most 2 time(s) in this round" in prompt


def test_the_objective_stays_out_of_reach_and_its_fake_changes_nothing(abused: Path) -> None:
    seen = json.loads((abused / "abuser.json").read_text())
    assert seen["found"] == []
    result = TrialResult.model_validate_json((abused / "result.json").read_text())
    # The agent's fake objective (print(1)) and the json module it planted beside it (whose
    # dumps prints a value of 1) are in its change, yet the value is the honest one.
    assert ".objective/count_operations.py" in result.rounds[0].diff.paths
    assert ".objective/json.py" in result.rounds[0].diff.paths
    assert result.rounds[0].grading.metrics["objective.value"] == ROUND1  # type: ignore[union-attr]
    # The module standing in for the standard one is the gate's finding: the round is
    # tampered, reverted, and so is the trial.
    grading = result.rounds[0].grading
    assert grading is not None and grading.outcome == "tampered"
    assert any(f.path == ".objective/json.py" for f in grading.findings)
    assert result.metrics["improve.final"] == 29367.0 and result.outcome == "tampered"
    # A tampered trial improved nothing, in every view: score 0, no gain, no ratio.
    assert result.score == 0.0 and result.metrics["improve.anytime"] == 0.0
    assert not {"improve.gain", "improve.ratio", "improve.log_ratio"} & set(result.metrics)
    assert json.loads((abused / "improve.json").read_text())["passed"] is False
