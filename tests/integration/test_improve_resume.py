"""A killed improvement trial resumes at the round it was in, and ends as if never killed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harnessdrive.store.results import TrialResult
from tests.trial_results import trial_folder
from tests.waiting import wait_until

OBJECTIVE = "import sys\nsys.path.insert(0, '.')\nfrom level import LEVEL\nprint(LEVEL)\n"
LEVELS = (100, 80, 50, 30)


def _suite(root: Path, log: Path, options: str = "") -> Path:
    suite = root / "suite"
    project = suite / "project"
    (project / "tests").mkdir(parents=True)
    (project / "level.py").write_text(f"LEVEL = {LEVELS[0]}\n")
    (project / "tests" / "test_level.py").write_text(
        "import unittest\nfrom level import LEVEL\n\n\n"
        "class Level(unittest.TestCase):\n    def test_positive(self):\n"
        "        self.assertGreater(LEVEL, 0)\n"
    )
    task = suite / "tasks" / "lower"
    (task / "objective").mkdir(parents=True)
    (task / "objective" / "level.py").write_text(OBJECTIVE)
    for number, level in enumerate(LEVELS[1:], start=1):
        (task / f"round{number}").mkdir()
        (task / f"round{number}" / "level.py").write_text(f"LEVEL = {level}\n")
    (task / "task.toml").write_text(
        textwrap.dedent(
            """
            id = "lower"
            prompt = "Lower the level."
            [repo]
            path = "../../project"
            [grade]
            command = "{python} -m unittest discover -s tests"
            protected = ["tests/**"]
            [improve]
            rounds = 3
            overlays = ["round1", "round2", "round3"]
            [improve.objective]
            command = "{python} .objective/level.py"
            inject = [{ source = "objective/level.py", target = ".objective/level.py" }]
            """
        )
    )
    (suite / "suite.toml").write_text(
        textwrap.dedent(
            f"""
            name = "resume"
            [[variants]]
            harness = "harnessdrive.testing.improvers:SlowImprover"
            name = "slow"
            options = {{ seconds = 1.5, log = {json.dumps(str(log))}{options} }}
            """
        )
    )
    return suite


def _command(suite: Path, results: Path) -> list[str]:
    return [sys.executable, "-m", "harnessdrive", "run", str(suite), "--results", str(results)]


def _checkpointed_rounds(results: Path) -> int:
    found = list(results.glob("trials/*/lower/slow/r1/checkpoint.json"))
    return json.loads(found[0].read_text())["rounds"] if found else 0


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    root = tmp_path_factory.mktemp("resume")
    log = root / "rounds.log"
    suite = _suite(root, log)
    killed = root / "killed"
    driver = subprocess.Popen(
        _command(suite, killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    # Round 1 is recorded; round 2's agent is at work (it works 1.5 s before it changes
    # anything): the driver dies with it.
    wait_until(lambda: _checkpointed_rounds(killed) == 1, "round 1 recorded", process=driver)
    wait_until(lambda: log.read_text().split() == ["1", "2"], "round 2 under way", process=driver)
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    assert _checkpointed_rounds(killed) == 1
    # A copy whose checkpoint was tampered with: its saved best state names a path outside.
    tampered = root / "tampered"
    shutil.copytree(killed, tampered)
    [checkpoint] = tampered.glob("trials/*/lower/slow/r1/checkpoint.json")
    data = json.loads(checkpoint.read_text())
    data["state"]["best"]["files"][0]["path"] = "../../escaped.py"
    checkpoint.write_text(json.dumps(data))
    again = subprocess.run(_command(suite, killed), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    rounds_run = log.read_text().split()
    whole = root / "whole"
    # The uninterrupted run and the tampered copy's are independent: they run side by side.
    side_by_side = [
        subprocess.Popen(_command(suite, each), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for each in (whole, tampered)
    ]
    for process in side_by_side:
        _, error = process.communicate(timeout=600)
        assert process.returncode == 0, error[-2000:]
    return killed, whole, rounds_run


def _result(results: Path) -> TrialResult:
    folder = trial_folder(results, "resume/lower/slow/r1")
    return TrialResult.model_validate_json((folder / "result.json").read_text())


def test_the_same_command_resumes_at_the_round_that_was_killed(
    runs: tuple[Path, Path, list[str]],
) -> None:
    killed, _, rounds_run = runs
    # Round 1 ran once, round 2 twice (killed, then again), round 3 once.
    assert rounds_run == ["1", "2", "2", "3"]
    result = _result(killed)
    assert result.attempt == 2 and result.status == "completed"
    assert [r.number for r in result.rounds] == [1, 2, 3]


def test_the_resumed_trial_ends_as_an_uninterrupted_one(
    runs: tuple[Path, Path, list[str]],
) -> None:
    killed, whole = _result(runs[0]), _result(runs[1])
    assert [killed.metrics[f"improve.curve.{n}"] for n in range(4)] == list(LEVELS)
    assert (killed.outcome, killed.score, killed.metrics) == (
        whole.outcome,
        whole.score,
        whole.metrics,
    )
    assert [r.note for r in killed.rounds] == [r.note for r in whole.rounds]
    assert [r.grading.metrics for r in killed.rounds] == [r.grading.metrics for r in whole.rounds]  # type: ignore[union-attr]
    assert killed.totals.rounds == whole.totals.rounds == 3
    # Seconds add up: the rounds carried on were timed in the killed attempt.
    seconds = killed.seconds
    assert seconds.total >= seconds.setup + seconds.agent + seconds.grading - 0.01
    assert seconds.total >= whole.seconds.agent


def test_every_rounds_files_stay_under_the_attempt(runs: tuple[Path, Path, list[str]]) -> None:
    killed, whole = (trial_folder(each, "resume/lower/slow/r1") for each in runs[:2])

    def files(folder: Path) -> set[str]:
        return {
            p.relative_to(folder).as_posix()
            for p in folder.rglob("*")
            if p.is_file() and "previous" not in p.relative_to(folder).parts
        }

    # The resumed attempt holds what an uninterrupted one does: round 1's prompt, diff and
    # logs, the baseline's logs, every later round's.
    for name in ("prompt.md", "diff.patch", "rounds/0/grade-objective-1.log", "improve.json"):
        assert (killed / name).is_file(), name
    assert files(whole) <= files(killed)
    assert (killed / "diff.patch").read_bytes() == (whole / "diff.patch").read_bytes()
    # The killed attempt keeps its recorded rounds too, where earlier attempts sit.
    kept = killed / "previous" / "1" / "checkpointed"
    assert (kept / "prompt.md").is_file() and (kept / "rounds" / "0").is_dir()
    assert not (killed / "checkpointed").exists()


def test_a_tampered_checkpoint_is_not_trusted_and_the_trial_starts_over(
    runs: tuple[Path, Path, list[str]],
) -> None:
    tampered = runs[0].parent / "tampered"
    result, whole = _result(tampered), _result(runs[1])
    assert result.attempt == 2 and result.status == "completed"
    # All three rounds ran in the new attempt, and it ends as an uninterrupted trial does.
    assert [r.number for r in result.rounds] == [1, 2, 3]
    assert (result.outcome, result.metrics) == (whole.outcome, whole.metrics)
    record = json.loads(
        (trial_folder(tampered, "resume/lower/slow/r1") / "improve.json").read_text()
    )
    assert "not a path inside the repository: '../../escaped.py'" in record["checkpoint_unusable"]
    assert not list(tampered.parent.rglob("escaped.py"))


def test_a_transient_machinery_failure_resumes_from_the_last_checkpoint(
    tmp_path: Path, runs: tuple[Path, Path, list[str]]
) -> None:
    log, once = tmp_path / "rounds.log", tmp_path / "once"
    suite = _suite(tmp_path, log, f", fail_once_in_round = 2, once = {json.dumps(str(once))}")
    results = tmp_path / "results"
    first = subprocess.run(_command(suite, results), capture_output=True, text=True, timeout=600)
    # Its only trial could not run: the run says so and exits 1.
    assert "a transient failure of the machinery" in first.stderr
    failed = _result(results)
    assert failed.status == "could_not_run" and _checkpointed_rounds(results) == 1
    again = subprocess.run(_command(suite, results), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    # Round 1 ran once: the rerun took up at round 2 from round 1's checkpoint.
    assert log.read_text().split() == ["1", "2", "2", "3"]
    result, whole = _result(results), _result(runs[1])
    assert result.attempt == 2 and result.status == "completed"
    assert (result.outcome, result.metrics) == (whole.outcome, whole.metrics)
