"""The pieces of improvement tasks that need no trial: acceptance, ratios, scores, the value an
objective prints, the task format and the reference overlays."""

from __future__ import annotations

import base64
import math
import socket
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.errors import TaskFormatError
from harnessdrive.grading.objective import read_value
from harnessdrive.harnesses.base import AgentRun
from harnessdrive.protocols.improve.acceptance import improvement, ratio
from harnessdrive.protocols.improve.checkpoint_state import SavedFile
from harnessdrive.protocols.improve.evaluator import (
    COMMAND_VARIABLE,
    URL_VARIABLE,
    Answer,
    Evaluator,
    RoundClosing,
    call_evaluator,
)
from harnessdrive.protocols.improve.scores import anytime_score, progress, value_score
from harnessdrive.running.sandbox_choice import secret_paths
from harnessdrive.tasks.improve_models import ImproveOverrides, ImproveSpec
from harnessdrive.tasks.loading import load_suite, load_task
from harnessdrive.tasks.overlays import apply_next_overlay

JITTER = (-0.05, 0.025, 0.05, -0.025, 0.0)


def noisy(level: float) -> list[float]:
    return [level * (1 + j) for j in JITTER]


def test_one_sample_each_accepts_any_gain_beyond_the_margin() -> None:
    found = improvement("minimize", [100.0], [98.0])
    assert (found.relative, found.low, found.high) == pytest.approx((0.02, 0.02, 0.02))
    assert found.beyond(0.0) and not found.beyond(0.05)
    assert not improvement("minimize", [100.0], [100.0]).beyond(0.0)
    assert improvement("maximize", [10.0], [12.0]).relative == pytest.approx(0.2)
    assert not improvement("maximize", [10.0], [8.0]).beyond(0.0)


def test_noise_hides_a_small_gain_but_not_a_large_one() -> None:
    small = improvement("minimize", noisy(100), noisy(98))
    assert small.relative == pytest.approx(0.02) and small.low < 0 < small.high
    assert not small.beyond(0.0)
    large = improvement("minimize", noisy(100), noisy(70))
    assert 0 < large.low < 0.3 < large.high and large.beyond(0.1)


def test_nothing_beats_zero_when_minimising_and_anything_beats_it_when_maximising() -> None:
    assert not improvement("minimize", [0.0], [0.0]).beyond(0.0)
    assert math.isinf(improvement("maximize", [0.0], [3.0]).relative)


def test_ratio_by_direction_with_an_interval() -> None:
    assert ratio("minimize", [100.0], [25.0]) is not None
    assert ratio("minimize", [100.0], [25.0]).value == 4.0  # type: ignore[union-attr]
    assert ratio("maximize", [10.0], [30.0]).value == 3.0  # type: ignore[union-attr]
    assert ratio("minimize", [100.0], [0.0]) is None  # minimised to 0: no finite ratio
    found = ratio("minimize", noisy(100), noisy(50))
    assert found is not None and found.low <= 2.0 <= found.high and found.low < found.high


def test_scores_anytime_and_progress() -> None:
    assert value_score("minimize", 100, 50) == 0.5
    assert value_score("minimize", 100, 0) == 1.0
    assert value_score("minimize", 100, 120) == 0.0
    assert value_score("maximize", 10, 40) == 0.75
    # Reaching the best in round 1 of 2 scores it fully; only in round 2, half.
    assert anytime_score("minimize", [100, 50, 50]) == 0.5
    assert anytime_score("minimize", [100, 100, 50]) == 0.25
    assert progress(100, 60, 20) == 0.5 and progress(100, 60, None) is None


@pytest.mark.parametrize(
    ("output", "value"),
    [
        ("noise 3 more 7\n", 7.0),
        ('{"value": 12.5, "note": 99}\ntrailing 4\n', 12.5),
        ("1e3\n", 1000.0),
        ("nothing here\n", None),
        ("nan\n", None),
        ('{"value": true}\n', None),
    ],
)
def test_the_value_is_a_json_value_or_the_last_number(
    tmp_path: Path, output: str, value: float | None
) -> None:
    log = tmp_path / "grade-objective-1.log"
    log.write_text("$ cmd 5\n# run as: cmd 6\n" + output)
    assert read_value(log) == value


def _task(folder: Path, improve: str, grade: str = "") -> Path:
    (folder / "repo").mkdir(parents=True)
    (folder / "repo" / "a.py").write_text("A = 1\n")
    (folder / "task.toml").write_text(
        f'id = "t"\nprompt = "p"\n[repo]\npath = "repo"\n[grade]\ncommand = "true"\n{grade}'
        f"\n{improve}"
    )
    return folder


def test_an_improve_table_makes_the_task_an_improvement_task(tmp_path: Path) -> None:
    folder = _task(tmp_path, '[improve.objective]\ncommand = "echo 3"\n')
    task = load_task(folder)
    assert (task.spec.protocol, task.spec.grade.kind) == ("improve", "improve")
    assert task.spec.improve is not None and task.spec.improve.rounds == 3


def test_bad_improve_tables_are_one_line_errors(tmp_path: Path) -> None:
    missing = _task(
        tmp_path / "a",
        '[improve.objective]\ncommand = "x"\ninject = [{ source = "no.py", target = "b.py" }]\n',
    )
    with pytest.raises(TaskFormatError, match=r"objective file not found: no\.py"):
        load_task(missing)
    tests_kind = _task(tmp_path / "b", '[improve.objective]\ncommand = "x"\n', 'kind = "tests"')
    with pytest.raises(TaskFormatError, match="needs a \\[grade\\] of kind 'improve'"):
        load_task(tests_kind)
    direction = _task(tmp_path / "c", '[improve.objective]\ncommand = "x"\ndirection = "up"\n')
    with pytest.raises(TaskFormatError) as caught:
        load_task(direction)
    assert "\n" not in str(caught.value) and "direction" in str(caught.value)


def test_the_reference_overlays_are_applied_one_per_round(tmp_path: Path) -> None:
    folder = _task(
        tmp_path / "t",
        '[improve]\noverlays = ["one", "two"]\n[improve.objective]\ncommand = "x"\n',
    )
    for name, level in (("one", 2), ("two", 3)):
        (folder / name).mkdir()
        (folder / name / "a.py").write_text(f"A = {level}\n")
    task = load_task(folder)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("A = 1\n")
    seen = []
    for _ in range(3):
        apply_next_overlay(task, workspace)
        seen.append((workspace / "a.py").read_text())
    assert seen == ["A = 2\n", "A = 3\n", "A = 3\n"]


def test_a_variant_overrides_rounds_and_the_evaluator_budget() -> None:
    spec = ImproveSpec.model_validate(
        {"objective": {"command": "x"}, "rounds": 3, "evaluator": {"budget": 1}}
    )
    changed = ImproveOverrides(rounds=1, evaluator_budget=0, max_evaluations=5).applied(spec)
    assert (changed.rounds, changed.evaluator.budget, changed.evaluator.max_evaluations) == (
        1,
        0,
        5,
    )
    assert ImproveOverrides().applied(spec) == spec


def test_an_edited_objective_or_overlay_changes_the_task_fingerprint(tmp_path: Path) -> None:
    # The objective file lies outside the task folder: it is still the task's, and secret.
    folder = _task(
        tmp_path / "t",
        '[improve]\noverlays = ["one"]\n[improve.objective]\ncommand = "x"\n'
        'inject = [{ source = "../measure.py", target = ".objective/measure.py" }]\n',
    )
    (tmp_path / "measure.py").write_text("print(1)\n")
    (folder / "one").mkdir()
    (folder / "one" / "a.py").write_text("A = 2\n")
    seen = [load_task(folder).fingerprint]
    (tmp_path / "measure.py").write_text("print(2)\n")
    seen.append(load_task(folder).fingerprint)
    (folder / "one" / "a.py").write_text("A = 3\n")
    seen.append(load_task(folder).fingerprint)
    (folder / "one" / "b.py").write_text("B = 3\n")
    seen.append(load_task(folder).fingerprint)
    assert len(set(seen)) == 4
    (tmp_path / "measure.py").write_text("print(1)\n")
    (folder / "one" / "b.py").unlink()
    (folder / "one" / "a.py").write_text("A = 2\n")
    assert load_task(folder).fingerprint == seen[0]  # the same files, the same task
    suite = load_suite(folder)
    secrets = secret_paths(suite, tmp_path / "results", tmp_path / "scratch")
    assert (tmp_path / "measure.py").resolve() in secrets
    assert (folder / "one").resolve() in secrets


def test_the_evaluator_answers_its_own_client_only(tmp_path: Path) -> None:
    measured: list[Path] = []
    evaluator = Evaluator(
        1, None, lambda where, _round, _call: measured.append(where) or Answer(7.0)
    )
    try:
        evaluator.open_round(1, tmp_path / "ws", tmp_path / "home")
        assert call_evaluator(tmp_path / "home") == "7"
        # A caller without the trial's token (another trial's agent, say) is neither measured
        # nor counted against this trial's budget.
        with socket.create_connection(("127.0.0.1", evaluator.port)) as link:
            link.sendall(b"measure\n")
            assert link.makefile().readline().startswith("refused: not this trial's")
        assert measured == [tmp_path / "ws"] and len(evaluator.calls) == 1
        assert call_evaluator(tmp_path / "home").startswith("refused: the budget of 1")
        env = evaluator.env(tmp_path / "home", "/usr/bin/python3")
        assert env[URL_VARIABLE] == f"http://127.0.0.1:{evaluator.port}/"
        assert env[COMMAND_VARIABLE].endswith("home/.harnessdrive/evaluate.py")
    finally:
        evaluator.close()


@pytest.mark.parametrize(
    "saved",
    [
        {"path": "../x.py", "mode": "100644", "data": "eA=="},
        {"path": "/etc/x", "mode": "100644", "data": "eA=="},
        {"path": "a/../../b", "deleted": True},
        {"path": ".git/hooks/pre-commit", "mode": "100755", "data": "eA=="},
        {"path": "a.py", "mode": "100644", "data": "not base64!"},
        {"path": "a.py", "data": "eA=="},
        {"path": "link", "mode": "120000", "data": base64.b64encode(b"../../etc").decode()},
        {"path": "a.py", "mode": "100644", "data": "eA==", "extra": 1},
    ],
)
def test_a_saved_file_that_could_reach_outside_the_repository_is_refused(
    saved: dict[str, object],
) -> None:
    with pytest.raises(ValueError):
        SavedFile.model_validate(saved)


def test_a_saved_file_inside_the_repository_reads_back() -> None:
    link = base64.b64encode(b"../b.py").decode()
    assert SavedFile.model_validate({"path": "a/link", "mode": "120000", "data": link})
    assert SavedFile.model_validate({"path": "a/b.py", "deleted": True})


def test_the_trials_measurements_count_measured_calls_not_refused_ones(tmp_path: Path) -> None:
    values = iter([Answer(5.0), Answer(None, "sample 1 exited with 1"), Answer(4.0)])
    evaluator = Evaluator(2, 3, lambda _where, _round, _call: next(values))
    home = tmp_path / "home"
    try:
        evaluator.open_round(1, tmp_path / "ws", home)
        answers = [call_evaluator(home) for _ in range(3)]
        evaluator.open_round(2, tmp_path / "ws", home)
        answers += [call_evaluator(home) for _ in range(2)]
    finally:
        evaluator.close()
    assert answers[:2] == ["5", "could not be measured: sample 1 exited with 1"]
    assert answers[2].startswith("refused: the budget of 2")
    # Round 1's refused call does not use up the trial's three measurements.
    assert answers[3:] == ["4", "refused: the trial's 3 measurement(s) are spent"]
    assert [(c.value, c.refused is None) for c in evaluator.calls] == [
        (5.0, True),
        (None, True),
        (None, False),
        (4.0, True),
        (None, False),
    ]


class _Measuring:
    """A stand-in harness: its run asks the evaluator once."""

    name = "measuring"

    def __init__(self, home: Path) -> None:
        self.home = home
        self.answers: list[str] = []

    def run(self, request: Any) -> AgentRun:
        self.answers.append(call_evaluator(self.home))
        return AgentRun(exit_code=0, timed_out=False, seconds=0.0)


def test_the_evaluators_round_closes_when_the_agents_run_ends(tmp_path: Path) -> None:
    evaluator = Evaluator(5, None, lambda _where, _round, _call: Answer(3.0))
    home = tmp_path / "home"
    agent = _Measuring(home)
    try:
        evaluator.open_round(1, tmp_path / "ws", home)
        RoundClosing(agent, evaluator).run(None)  # type: ignore[arg-type]
        # What the agent left running asks again while the round is graded: refused.
        late = call_evaluator(home)
    finally:
        evaluator.close()
    assert agent.answers == ["3"] and late == "refused: no round is under way"


def test_a_machinery_failure_is_recorded_but_not_charged_to_the_agent(tmp_path: Path) -> None:
    values = iter([Answer(None, "the measuring machinery failed: disk", machinery=True)])
    evaluator = Evaluator(1, None, lambda _where, _round, _call: next(values, Answer(2.0)))
    home = tmp_path / "home"
    try:
        evaluator.open_round(1, tmp_path / "ws", home)
        answers = [call_evaluator(home) for _ in range(2)]
    finally:
        evaluator.close()
    assert answers[0].startswith("could not be measured (the machinery failed")
    assert answers[1] == "2"  # the budget of one is the agent's: the failed call is not on it
    assert [(c.call, c.machinery) for c in evaluator.calls] == [(1, True), (2, False)]
