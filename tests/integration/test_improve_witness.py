"""The objective's witness: when a trial's final state claims an improvement, a known-bad state
(the untouched base state, or the task's ``known_bad`` folder over it) is measured beside it
and must come out worse; a value that does not depend on the code ends the trial tampered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.store.results import TrialResult
from tests.trial_results import trial_folder

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("improve-witness")]

LEVEL = "import sys\nsys.path.insert(0, '.')\nfrom level import LEVEL\nprint(LEVEL)\n"
CLOCK = "import time\nprint(2e9 - time.time())\n"
"""Smaller at every reading whatever the code: a later measurement always looks better."""


def _task(suite: Path, name: str, objective: str, overlay: str, known_bad: str | None) -> None:
    folder = suite / "tasks" / name
    (folder / "objective").mkdir(parents=True)
    (folder / "objective" / "level.py").write_text(objective)
    (folder / "o1").mkdir()
    (folder / "o1" / "level.py").write_text(overlay)
    setting = ""
    if known_bad is not None:
        (folder / "bad").mkdir()
        (folder / "bad" / "level.py").write_text(known_bad)
        setting = 'known_bad = "bad"\n'
    (folder / "task.toml").write_text(
        f'id = "{name}"\nprompt = "Lower the level."\n[repo]\npath = "../../project"\n'
        "[grade]\ncommand = \"{python} -c 'import level'\"\n"
        f'[improve]\nrounds = 1\noverlays = ["o1"]\n{setting}'
        '[improve.objective]\ncommand = "{python} .objective/level.py"\n'
        'inject = [{ source = "objective/level.py", target = ".objective/level.py" }]\n'
    )


@pytest.fixture(scope="module")
def witnessed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    suite = tmp_path_factory.mktemp("witness") / "suite"
    (suite / "project").mkdir(parents=True)
    (suite / "project" / "level.py").write_text("LEVEL = 100\n")
    (suite / "suite.toml").write_text('name = "witness"\n')
    _task(suite, "honest", LEVEL, "LEVEL = 80\n", None)
    _task(suite, "honest-bad", LEVEL, "LEVEL = 80\n", "LEVEL = 1000\n")
    _task(suite, "clock", CLOCK, "LEVEL = 80\n", None)
    _task(suite, "bad-not-worse", LEVEL, "LEVEL = 80\n", "LEVEL = 50\n")
    results = suite.parent / "results"
    run_cli(["run", str(suite), "--harness", "reference", "--results", str(results), "-j", "2"])
    return results


def _trial(results: Path, task: str) -> tuple[TrialResult, dict[str, object]]:
    folder = trial_folder(results, f"witness/{task}/reference/r1")
    result = TrialResult.model_validate_json((folder / "result.json").read_text())
    return result, json.loads((folder / "improve.json").read_text())


@pytest.mark.parametrize(("task", "value"), [("honest", 100.0), ("honest-bad", 1000.0)])
def test_an_honest_improvement_passes_with_its_witness_measured(
    witnessed: Path, task: str, value: float
) -> None:
    result, record = _trial(witnessed, task)
    assert (result.outcome, result.metrics["improve.final"]) == ("pass", 80.0)
    assert result.metrics["improve.witness"] == value
    witness = record["witness"]
    assert isinstance(witness, dict)
    assert (witness["value"], witness["worse"], witness["error"]) == (value, True, None)
    expected = "the untouched base state" if task == "honest" else "the known-bad state (bad)"
    assert witness["state"] == expected
    assert result.grading is not None and not result.grading.findings


def test_a_value_that_does_not_depend_on_the_code_ends_tampered(witnessed: Path) -> None:
    result, record = _trial(witnessed, "clock")
    assert (result.outcome, result.score) == ("tampered", 0.0)
    assert record["passed"] is False
    assert result.grading is not None
    [finding] = [f for f in result.grading.findings if f.code == "objective-witness"]
    assert finding.tampers
    assert str(finding.detail).startswith("the untouched base state measured ")
    witness = record["witness"]
    assert isinstance(witness, dict) and witness["worse"] is False


def test_a_declared_known_bad_state_that_is_not_worse_is_a_finding(witnessed: Path) -> None:
    result, record = _trial(witnessed, "bad-not-worse")
    assert result.outcome == "tampered" and result.metrics["improve.witness"] == 50.0
    assert result.grading is not None
    [finding] = [f for f in result.grading.findings if f.code == "objective-witness"]
    assert str(finding.detail).startswith("the known-bad state (bad) measured 50 beside the")
    assert "final state's 80" in str(finding.detail)
    assert isinstance(record["witness"], dict) and record["witness"]["worse"] is False
