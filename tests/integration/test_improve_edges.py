"""Improvement trials at their edges: a task whose untouched repository cannot be the baseline,
a round whose state cannot be measured, and ``keep_best = false`` carrying every change over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.store.results import TrialResult
from tests.trial_results import trial_folder

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("improve-edges")]

OBJECTIVE = "import sys\nsys.path.insert(0, '.')\nfrom level import LEVEL\nprint(LEVEL)\n"
GATE = "{python} -c 'import level'"


def _task(suite: Path, name: str, overlays: dict[str, str], **settings: str) -> None:
    """A task lowering ``level.py``'s LEVEL; each overlay writes one file (path: text)."""
    folder = suite / "tasks" / name
    (folder / "objective").mkdir(parents=True)
    (folder / "objective" / "level.py").write_text(settings.get("objective", OBJECTIVE))
    for number, (path, text) in enumerate(overlays.items(), start=1):
        (folder / f"o{number}").mkdir()
        # A key naming an overlay (o2) writes level.py again: the keys must differ.
        (folder / f"o{number}" / ("level.py" if path.startswith("o") else path)).write_text(text)
    names = ", ".join(f'"o{n}"' for n in range(1, len(overlays) + 1))
    (folder / "task.toml").write_text(
        f'id = "{name}"\nprompt = "Lower the level."\n[repo]\npath = "../../project"\n'
        f'[grade]\ncommand = "{settings.get("gate", GATE)}"\n'
        f"[improve]\nrounds = {max(len(overlays), 1)}\noverlays = [{names}]\n"
        f"keep_best = {settings.get('keep_best', 'true')}\n"
        f"[improve.objective]\nrepeats = {settings.get('repeats', '1')}\n"
        'command = "{python} .objective/level.py"\n'
        'inject = [{ source = "objective/level.py", target = ".objective/level.py" }]\n'
    )


@pytest.fixture(scope="module")
def edges(tmp_path_factory: pytest.TempPathFactory) -> Path:
    suite = tmp_path_factory.mktemp("edges") / "suite"
    (suite / "project").mkdir(parents=True)
    (suite / "project" / "level.py").write_text("LEVEL = 100\n")
    (suite / "suite.toml").write_text('name = "edges"\n')
    _task(suite, "gate-fails", {}, gate="{python} -c 'raise SystemExit(1)'")
    _task(suite, "already-zero", {}, objective="print(0)\n")
    _task(suite, "unmeasurable", {"level.py": "LEVEL = None\n"})
    carried = {"level.py": "LEVEL = 80\n", "o2": "LEVEL = 120\n", "b.py": "B = 1\n"}
    _task(suite, "carried", carried, keep_best="false", repeats="2")
    results = suite.parent / "results"
    run_cli(["run", str(suite), "--harness", "reference", "--results", str(results), "-j", "2"])
    return results


def _trial(results: Path, task: str) -> tuple[TrialResult, Path]:
    folder = trial_folder(results, f"edges/{task}/reference/r1")
    return TrialResult.model_validate_json((folder / "result.json").read_text()), folder


@pytest.mark.parametrize(
    ("task", "why"),
    [
        ("gate-fails", "the untouched repository does not pass the gate (fail)"),
        ("already-zero", "the objective's baseline is 0: it must be ≥ 0, and above 0"),
    ],
)
def test_an_untouched_repository_that_cannot_be_the_baseline_is_not_the_agents_fail(
    edges: Path, task: str, why: str
) -> None:
    result, folder = _trial(edges, task)
    assert result.status == "could_not_run" and result.outcome == "not_graded"
    [only] = result.rounds
    assert only.agent.error is not None and why in only.agent.error, only.agent.error
    if task == "gate-fails":  # the logs it points to are where it says
        assert only.agent.error.endswith("see rounds/0/ in the trial folder")
        assert list((folder / "rounds" / "0").glob("grade-*.log"))


def test_a_state_that_cannot_be_measured_is_a_failed_round(edges: Path) -> None:
    result, folder = _trial(edges, "unmeasurable")
    [entry] = json.loads((folder / "improve.json").read_text())["rounds"]
    assert (entry["state"], entry["value"], entry["gate"]) == ("failed", None, "pass")
    assert entry["note"].startswith("could not be measured: sample 1 printed no number")
    assert result.outcome == "fail" and result.metrics["improve.final"] == 100.0


def test_without_keep_best_every_change_carries_over(edges: Path) -> None:
    result, folder = _trial(edges, "carried")
    rounds = json.loads((folder / "improve.json").read_text())["rounds"]
    # Round 2 made it worse and was not reverted: round 3 began from it, its state holds both.
    assert [(e["state"], e["value"]) for e in rounds] == [
        ("kept", 80.0),
        ("carried", 120.0),
        ("carried", 120.0),
    ]
    assert sorted(result.rounds[2].diff.paths) == ["b.py", "level.py"]
    assert result.metrics["improve.final"] == 120.0 and result.metrics["improve.best"] == 80.0
    assert (result.outcome, result.score) == ("fail", 0.0)
    # With several samples the final state and the best, another state here, are measured anew.
    for again in ("4", "5"):
        assert len(list((folder / "rounds" / again).glob("grade-objective-[0-9].log"))) == 2
