"""``show``'s reading of a trial folder: failing tests from junit without the grader's canaries,
hostile text made harmless, and trials named by the end of their id."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.errors import UserError
from harnessdrive.grading.witness import Canary, WitnessPlan, write_canaries
from harnessdrive.report.show import find_trial, trial_view
from harnessdrive.report.show_text import render_trial
from harnessdrive.store.paths import TrialPaths
from harnessdrive.transcript.models import Event, Transcript
from tests.trial_results import trial_result

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3">
<testcase classname="tests.test_spec" name="test_real">
<failure message="assert 1 == 2">def test_real():
&gt;       assert 1 == 2</failure></testcase>
<testcase classname="tests.test_spec" name="test_fine"/>
<testcase classname="tests.test_spec" name="test_keeps_rows_split">
<failure message="canary"/></testcase>
</testsuite></testsuites>
"""


def _trial(results: Path, trial_id: str) -> TrialPaths:
    paths = TrialPaths(results / "trials" / trial_id)
    paths.root.mkdir(parents=True)
    result = trial_result("t", "codex", trial_id=trial_id, status="completed", outcome="fail")
    paths.result.write_text(result.to_json())
    paths.prompt.write_text("Fix it.")
    events = (
        Event(kind="message", text="I will \x1b[2Jclear your screen"),
        Event(kind="command", text="pytest -q", data={"exit_code": 1}),
    )
    paths.transcript.write_text(Transcript(events=events).model_dump_json())
    (paths.root / "junit-tests.xml").write_text(JUNIT)
    plan = WitnessPlan(
        "pytest", (Canary("tests/test_spec.py", "", "test_keeps_rows_split", False),), ()
    )
    write_canaries(paths.root / "junit-tests.xml", plan)
    return paths


def test_failing_tests_leave_out_the_canaries_and_hostile_text_is_escaped(tmp_path: Path) -> None:
    paths = _trial(tmp_path, "s@1/t/codex/r1")
    view = trial_view(paths)
    assert [(t.name, t.message) for t in view.failing_tests] == [
        ("tests.test_spec::test_real", "assert 1 == 2")
    ]
    assert "assert 1 == 2" in view.failing_tests[0].output
    text = render_trial(view)
    assert "\x1b" not in text and "\\x1b[2J" in text
    assert "[command] $ pytest -q  -> exit 1" in text
    assert "FAILED tests.test_spec::test_real" in text and "test_keeps_rows_split" not in text


def test_a_trial_is_found_by_the_end_of_its_id_or_its_folder(tmp_path: Path) -> None:
    one = _trial(tmp_path, "s@1/t/codex/r1")
    _trial(tmp_path, "s@1/t/codex/r2")
    assert find_trial(tmp_path, "t/codex/r1") == one
    assert find_trial(tmp_path, str(one.root)).root == one.root.resolve()
    _trial(tmp_path, "s@2/t/codex/r1")
    with pytest.raises(UserError, match="names 2 trials"):
        find_trial(tmp_path, "t/codex/r1")
    with pytest.raises(UserError, match="no trial"):
        find_trial(tmp_path, "t/claude/r1")
    # A task or a task's variant alone lists its trials to choose from.
    with pytest.raises(UserError, match=r"'t' names 3 trials: s@1/t/codex/r1, s@1/t/codex/r2"):
        find_trial(tmp_path, "t")
    with pytest.raises(UserError, match=r"'t/codex' names 3 trials"):
        find_trial(tmp_path, "t/codex")
    assert find_trial(tmp_path, "s@2/t").root == (tmp_path / "trials/s@2/t/codex/r1").resolve()
