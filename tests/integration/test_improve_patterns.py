"""Every way an agent uses the in-loop evaluator ends with the curve of an agent that never
asks: measure then improve, measure twice, two calls at once, and calls with several samples.
Each call measures the objective alone, in a grading copy of its own, never the hidden tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.demo import DEMO_SUITE
from harnessdrive.report.improvement import improvement_notes
from harnessdrive.report.show import trial_view
from harnessdrive.report.show_text import render_trial
from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import TrialResult
from tests.trial_results import trial_folder

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("improve-patterns")]

PATTERNS = ("none", "before", "twice", "keep", "concurrent")


def _suite(root: Path, *, repeats: int = 1) -> Path:
    suite = root / "suite"
    shutil.copytree(DEMO_SUITE / "improve-project", suite / "improve-project")
    task = suite / "tasks" / "fewer-comparisons"
    shutil.copytree(DEMO_SUITE / "tasks" / "fewer-comparisons", task)
    if repeats > 1:
        toml = task / "task.toml"
        toml.write_text(
            toml.read_text().replace(
                'unit = "key operations"', f'repeats = {repeats}\nunit = "key operations"'
            )
        )
    variants = "".join(
        f'[[variants]]\nharness = "harnessdrive.testing.improvers:MeasuringImprover"\n'
        f'name = "{pattern}"\noptions = {{ pattern = "{pattern}" }}\n'
        "improve = { evaluator_budget = 3 }\n"
        for pattern in PATTERNS
    )
    (suite / "suite.toml").write_text(f'name = "patterns"\n{variants}')
    return suite


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    suite = _suite(tmp_path_factory.mktemp("patterns"))
    folder = suite.parent / "results"
    assert run_cli(["run", str(suite), "--results", str(folder), "--jobs", "2"]) == 0
    return folder


def _curve(result: TrialResult) -> list[float]:
    count = sum(name.startswith("improve.curve.") for name in result.metrics)
    return [result.metrics[f"improve.curve.{n}"] for n in range(count)]


def _trial(results: Path, pattern: str) -> tuple[Path, TrialResult]:
    folder = trial_folder(results, f"patterns/fewer-comparisons/{pattern}/r1")
    return folder, TrialResult.model_validate_json((folder / "result.json").read_text())


@pytest.mark.parametrize("pattern", PATTERNS[1:])
def test_asking_the_evaluator_never_changes_the_curve(results: Path, pattern: str) -> None:
    _, plain = _trial(results, "none")
    folder, asked = _trial(results, pattern)
    assert plain.outcome == "pass" and _curve(plain) == [29367.0, 20741.0, 980.0]
    assert (asked.outcome, _curve(asked), asked.score) == ("pass", _curve(plain), plain.score)
    answers = json.loads((folder / "answers.json").read_text())
    expected = {
        "before": ["29367"],
        "twice": ["20741"] * 2,
        "keep": ["20741"] * 2,
        "concurrent": ["20741"] * 2,
    }
    assert answers == expected[pattern]
    record = json.loads((folder / "improve.json").read_text())
    assert all(call["error"] is None for call in record["evaluator"])


def test_an_evaluator_call_measures_the_objective_alone(results: Path) -> None:
    folder, _ = _trial(results, "twice")
    for call in (1, 2):
        logs = sorted(p.name for p in (folder / "evaluations" / str(call)).iterdir())
        assert "grade-objective-1.log" in logs
        # Neither the gate nor the hidden tests ran for the evaluator.
        assert not [name for name in logs if "hidden" in name or "visible" in name]


def test_calls_with_several_samples_keep_the_curve(tmp_path: Path) -> None:
    suite = _suite(tmp_path, repeats=2)
    folder = tmp_path / "results"
    assert run_cli(["run", str(suite), "--results", str(folder), "-H", "twice"]) == 0
    trial = trial_folder(folder, "patterns/fewer-comparisons/twice/r1")
    result = TrialResult.model_validate_json((trial / "result.json").read_text())
    assert result.outcome == "pass" and _curve(result) == [29367.0, 20741.0, 980.0]
    assert json.loads((trial / "answers.json").read_text()) == ["20741", "20741"]


def test_a_tampered_trial_improves_nothing_in_any_view(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    (suite / "suite.toml").write_text(
        'name = "patterns"\n[[variants]]\n'
        'harness = "harnessdrive.testing.improvers:MeasuringImprover"\nname = "cheat"\n'
        'options = { pattern = "none", tamper_in_round = 2 }\n'
    )
    folder = tmp_path / "results"
    run_cli(["run", str(suite), "--results", str(folder)])
    trial = trial_folder(folder, "patterns/fewer-comparisons/cheat/r1")
    result = TrialResult.model_validate_json((trial / "result.json").read_text())
    # Round 1 was an honest gain; round 2 tampered, so the trial is tampered and worth nothing.
    assert _curve(result)[:2] == [29367.0, 20741.0]
    assert result.outcome == "tampered" and result.score == 0.0
    assert result.metrics["improve.anytime"] == 0.0
    assert not {"improve.gain", "improve.ratio", "improve.log_ratio"} & set(result.metrics)
    assert json.loads((trial / "improve.json").read_text())["passed"] is False
    (note,) = improvement_notes([result])
    assert "tampered: no improvement, score 0.00" in note
    # show names the reverted round and shows the diff of the state that counted: round 1's.
    view = trial_view(TrialPaths(trial))
    assert (view.round, view.reverted) == (1, (2,))
    assert "json.py" not in view.diff.text and "dupes/finder.py" in view.diff.text
    text = render_trial(view)
    assert "round 1 of 2 shown" in text and "reverted rounds: 2" in text


def test_without_a_network_the_evaluator_is_neither_offered_nor_started(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    folder = tmp_path / "results"
    argv = ["run", str(suite), "--results", str(folder), "-H", "none", "--network", "none"]
    assert run_cli(argv) == 0
    trial = trial_folder(folder, "patterns/fewer-comparisons/none/r1")
    assert "measure your current state" not in (trial / "prompt.md").read_text()
    record = json.loads((trial / "improve.json").read_text())
    assert record["settings"] == {
        "rounds": 2,
        "keep_best": True,
        "min_improvement": 0.1,
        "session": "fresh",
        "evaluator": {
            "budget": 0,
            "max_evaluations": None,
            "offered": False,
            "withheld": "the agent runs without a network (--network none)",
        },
    }
    assert record["evaluator"] == []


def test_the_record_holds_the_settings_in_effect(results: Path) -> None:
    folder, _ = _trial(results, "twice")
    settings = json.loads((folder / "improve.json").read_text())["settings"]
    assert settings["evaluator"] == {
        "budget": 3,
        "max_evaluations": None,
        "offered": True,
        "withheld": None,
    }
    assert (settings["rounds"], settings["keep_best"]) == (2, True)
