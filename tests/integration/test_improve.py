"""Improvement tasks end to end: the demo's task under every built-in agent, and a noisy
objective whose small gain is refused and whose large gain is accepted with an interval."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.demo import DEMO_SUITE
from harnessdrive.store.results import TrialResult
from tests.trial_results import trial_folder

# One worker runs the module, so its shared fixtures are built once (tests/conftest.py).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("improve")]

TASK = DEMO_SUITE / "tasks" / "fewer-comparisons"
BASELINE, ROUND1, ROUND2 = 29367.0, 20741.0, 980.0
AGENTS = ("reference", "noop", "breaker", "tamperer")


def _run(suite: Path, results: Path, *harnesses: str) -> None:
    flags = [part for name in harnesses for part in ("--harness", name)]
    assert run_cli(["run", str(suite), *flags, "--results", str(results), "--jobs", "2"]) == 0


def _result(results: Path, trial: str) -> tuple[TrialResult, dict[str, object]]:
    folder = trial_folder(results, trial)
    record = json.loads((folder / "improve.json").read_text())
    return TrialResult.model_validate_json((folder / "result.json").read_text()), record


def _curve(result: TrialResult) -> list[float]:
    count = sum(name.startswith("improve.curve.") for name in result.metrics)
    return [result.metrics[f"improve.curve.{n}"] for n in range(count)]


@pytest.fixture(scope="module")
def demo_improve(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("improve") / "results"
    _run(TASK, results, *AGENTS)
    return results


def test_reference_applies_one_overlay_per_round_and_keeps_both(demo_improve: Path) -> None:
    result, record = _result(demo_improve, "fewer-comparisons/fewer-comparisons/reference/r1")
    assert _curve(result) == [BASELINE, ROUND1, ROUND2]
    assert [entry["state"] for entry in record["rounds"]] == ["kept", "kept"]  # type: ignore[union-attr,index]
    assert (result.outcome, result.status) == ("pass", "completed")
    assert result.score == round(1 - ROUND2 / BASELINE, 6)
    assert result.metrics["improve.ratio"] == pytest.approx(BASELINE / ROUND2)
    assert result.metrics["improve.log_ratio"] == pytest.approx(3.40007, abs=1e-4)
    assert result.metrics["improve.progress"] == pytest.approx(
        (BASELINE - ROUND2) / (BASELINE - 1000)
    )
    anytime = ((1 - ROUND1 / BASELINE) + (1 - ROUND2 / BASELINE)) / 2
    assert result.metrics["improve.anytime"] == pytest.approx(anytime)
    assert [r.number for r in result.rounds] == [1, 2]
    assert [r.grading.metrics["objective.value"] for r in result.rounds] == [ROUND1, ROUND2]  # type: ignore[union-attr]
    folder = trial_folder(demo_improve, "fewer-comparisons/fewer-comparisons/reference/r1")
    # Every round's prompt is kept and tells the agent where it stands.
    second = (folder / "rounds" / "2" / "prompt.md").read_text()
    assert "Round 2 of 2" in second and "Best so far: 20741 key operations" in second
    assert "Round 1: 20741 key operations, tests pass, new best" in second
    # The baseline's logs are kept apart; the objective's files never reached the agent.
    assert (folder / "rounds" / "0" / "grade-objective-1.log").is_file()
    assert ".objective" not in (folder / "diff.patch").read_text()


@pytest.mark.parametrize("agent", ["noop", "breaker", "tamperer"])
def test_no_other_built_in_agent_improves(demo_improve: Path, agent: str) -> None:
    result, record = _result(demo_improve, f"fewer-comparisons/fewer-comparisons/{agent}/r1")
    assert _curve(result) == [BASELINE, BASELINE, BASELINE]
    states = [entry["state"] for entry in record["rounds"]]  # type: ignore[union-attr,index]
    assert states == ["reverted", "reverted"]
    assert result.score == 0.0 and result.metrics["improve.anytime"] == 0.0
    # A tampered trial has no ratio at all: it improved nothing, in every view.
    assert result.metrics.get("improve.ratio") == (None if agent == "tamperer" else 1.0)
    expected = {"noop": "fail", "breaker": "fail", "tamperer": "tampered"}[agent]
    assert result.outcome == expected
    gates = [entry["gate"] for entry in record["rounds"]]  # type: ignore[union-attr,index]
    assert (
        gates
        == {"noop": ["pass"] * 2, "breaker": ["fail"] * 2, "tamperer": ["tampered"] * 2}[agent]
    )


def test_a_reverted_round_leaves_nothing_behind(demo_improve: Path) -> None:
    # The breaker's round 2 starts from a fresh copy of the best (the base): it breaks the
    # same function again, never a function its round 1 left broken.
    result, _ = _result(demo_improve, "fewer-comparisons/fewer-comparisons/breaker/r1")
    assert [r.diff.files_changed for r in result.rounds] == [1, 1]
    assert [r.diff.lines_added for r in result.rounds] == [1, 1]


NOISY_OBJECTIVE = """
import sys
sys.path.insert(0, ".")
from level import LEVEL
JITTER = [-0.05, 0.025, 0.05, -0.025, 0.0]
print("measuring", file=sys.stderr)
print(LEVEL * (1 + JITTER[(int(sys.argv[1]) - 1) % len(JITTER)]), flush=True)
print("took 12 ms", file=sys.stderr)  # a number after the value, but on stderr
"""


def _noisy_task(
    suite: Path, name: str, better: int, gate: str = "{python} -m pytest -q tests"
) -> None:
    folder = suite / "tasks" / name
    (folder / "objective").mkdir(parents=True)
    (folder / "objective" / "noisy.py").write_text(NOISY_OBJECTIVE)
    (folder / "better").mkdir()
    (folder / "better" / "level.py").write_text(f"LEVEL = {better}\n")
    (folder / "task.toml").write_text(
        textwrap.dedent(
            f"""
            id = "{name}"
            prompt = "Lower the level."
            [repo]
            path = "../../project"
            [grade]
            command = "{gate}"
            protected = ["tests/**"]
            [improve]
            rounds = 1
            overlays = ["better"]
            [improve.objective]
            command = "{{python}} .objective/noisy.py {{sample}}"
            inject = [{{ source = "objective/noisy.py", target = ".objective/noisy.py" }}]
            repeats = 5
            """
        )
    )


def _level_project(suite: Path) -> None:
    project = suite / "project"
    (project / "tests").mkdir(parents=True)
    (project / "level.py").write_text("LEVEL = 100\n")
    (project / "tests" / "test_level.py").write_text(
        "from level import LEVEL\n\n\ndef test_positive():\n    assert LEVEL > 0\n"
    )


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    suite = tmp_path_factory.mktemp("noisy") / "suite"
    _level_project(suite)
    (suite / "suite.toml").write_text('name = "noisy"\n')
    _noisy_task(suite, "two-percent", 98)
    _noisy_task(suite, "thirty-percent", 70)
    results = suite.parent / "results"
    _run(suite, results, "reference")
    return results


def test_a_gain_inside_the_noise_is_not_accepted(noisy: Path) -> None:
    result, record = _result(noisy, "noisy/two-percent/reference/r1")
    assert [entry["state"] for entry in record["rounds"]] == ["reverted"]  # type: ignore[union-attr,index]
    assert "beyond the noise" in record["rounds"][0]["note"]  # type: ignore[index]
    # Every sample is kept, in the round's verdict and in the record.
    samples = [result.rounds[0].grading.metrics[f"objective.sample.{n}"] for n in range(1, 6)]  # type: ignore[union-attr]
    assert samples == pytest.approx([93.1, 100.45, 102.9, 95.55, 98.0])
    assert record["rounds"][0]["samples"] == pytest.approx(samples)  # type: ignore[index]
    assert (result.outcome, result.score) == ("fail", 0.0)


def test_a_gain_beyond_the_noise_is_accepted_with_an_interval(noisy: Path) -> None:
    result, record = _result(noisy, "noisy/thirty-percent/reference/r1")
    assert [entry["state"] for entry in record["rounds"]] == ["kept"]  # type: ignore[union-attr,index]
    assert result.outcome == "pass"
    metrics = result.metrics
    assert metrics["improve.ratio"] == pytest.approx(100 / 70)
    assert metrics["improve.ratio_low"] < metrics["improve.ratio"] < metrics["improve.ratio_high"]
    assert 0 < metrics["improve.gain_low"] < 0.3 < metrics["improve.gain_high"]
    # The final state was measured again before the verdict: its logs are round 2's.
    folder = trial_folder(noisy, "noisy/thirty-percent/reference/r1")
    assert len(list((folder / "rounds" / "2").glob("grade-objective-[0-9].log"))) == 5
    assert record["final"]["samples"] == pytest.approx([66.5, 71.75, 73.5, 68.25, 70.0])  # type: ignore[index]


def test_a_noisy_improvers_small_gains_are_rejected_by_the_acceptance_rule(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite"
    _level_project(suite)
    (suite / "suite.toml").write_text(
        'name = "nudged"\n[[variants]]\n'
        'harness = "harnessdrive.testing.improvers:NoisyImprover"\nname = "nudger"\n'
        'options = { path = "level.py", step = 0.02 }\n'
    )
    _noisy_task(suite, "nudged", 70, gate="{python} -c 'import level'")
    results = tmp_path / "results"
    assert run_cli(["run", str(suite), "--results", str(results)]) == 0
    result, record = _result(results, "nudged/nudged/nudger/r1")
    rounds = record["rounds"]
    # The round really is 2% better (its median is 98), but inside the ±5% jitter: reverted.
    assert [entry["state"] for entry in rounds] == ["reverted"]  # type: ignore[union-attr,index]
    assert [entry["value"] for entry in rounds] == [98.0]  # type: ignore[union-attr,index]
    assert all("not better than the best beyond the noise (+2.0%" in e["note"] for e in rounds)  # type: ignore[union-attr,index]
    assert [r.diff.files_changed for r in result.rounds] == [1]
    assert _curve(result) == [100.0, 100.0]
    assert (result.outcome, result.score) == ("fail", 0.0)
