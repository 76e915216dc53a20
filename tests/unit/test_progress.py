from __future__ import annotations

import io

from rich.console import Console

from harnessdrive.cli.progress import LiveProgress
from harnessdrive.grading.verdict import Verdict
from harnessdrive.running.progress import PlainProgress, describe
from tests.trial_results import trial_result
from tests.unit.test_scoreboard import trial


def test_plain_progress_prints_one_line_per_finished_trial() -> None:
    stream = io.StringIO()
    progress = PlainProgress(stream)
    progress.trial_finished(trial("t1", "a", "fail", status="timeout"), 3, 8)
    assert stream.getvalue() == "[3/8] a on t1 (r1): fail (timeout) in 60.0s\n"


def test_live_progress_shows_results_and_clears_its_spinners() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    progress = LiveProgress(console)
    progress.trial_finished(trial("t1", "a", "tampered"), 1, 2)
    progress.close()
    assert "[1/2] a on t1 (r1): tampered in 60.0s" in out.getvalue()


def test_describe_names_the_fix_for_a_harness_that_could_not_run() -> None:
    result = trial("t1", "a", status="could_not_run")
    hinted = result.with_final_round(
        agent=result.agent.model_copy(update={"hint": "sign in: run `a` once"})
    )
    assert describe(hinted) == "could not run: sign in: run `a` once"


def test_a_trial_the_grader_could_not_evaluate_reads_as_on_the_scoreboard() -> None:
    result = trial_result(
        "t",
        "a",
        status="completed",
        outcome="not_graded",
        grading=Verdict(outcome="not_graded", error="setup failed in the grading copy"),
    )
    assert describe(result) == "not graded: setup failed in the grading copy"
