"""Suspect tasks after a run, each with its evidence in the scoreboard's notes."""

from __future__ import annotations

from harnessdrive.report.scoreboard import build_report
from harnessdrive.store.results import TrialResult
from tests.trial_results import trial_result


def _trial(task: str, arm: str, outcome: str, repetition: int = 1) -> TrialResult:
    return trial_result(
        task,
        arm,
        status="completed",
        outcome=outcome,
        repetition=repetition,
        trial_id=f"s/{task}/{arm}/r{repetition}",
    )


def _notes(results: list[TrialResult]) -> list[str]:
    return [note for note in build_report(results).notes if note.startswith("Suspect")]


def test_task_no_arm_solved_is_a_suspect() -> None:
    results = [_trial("hard", arm, "fail") for arm in ("a", "b")]
    results += [_trial("fine", "a", "pass"), _trial("fine", "b", "fail")]
    notes = _notes(results)
    assert len(notes) == 1
    assert "hard" in notes[0] and "no arm ever solved" in notes[0]


def test_task_noop_passes_is_a_suspect() -> None:
    results = [_trial("free", "noop", "pass"), _trial("free", "a", "pass")]
    notes = _notes(results)
    assert any("free" in note and "noop arm passed" in note for note in notes)


def test_task_that_flips_more_than_others_is_a_suspect() -> None:
    outcomes = {"steady": "pass pass pass pass", "calm": "fail fail fail fail"}
    outcomes["flaky"] = "pass fail pass fail"
    results = [
        _trial(task, "a", outcome, repetition=n)
        for task, sequence in outcomes.items()
        for n, outcome in enumerate(sequence.split(), start=1)
    ]
    results += [_trial(task, "b", "pass") for task in outcomes]
    notes = _notes(results)
    assert len(notes) == 1
    assert "flaky" in notes[0] and "flips" in notes[0]
