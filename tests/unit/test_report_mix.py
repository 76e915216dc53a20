"""The report header states every way its trials differ."""

from __future__ import annotations

import io

from rich.console import Console, RenderableType

from harnessdrive.report.mix import describe_mix
from harnessdrive.report.render import render_report
from harnessdrive.report.scoreboard import build_report
from tests.trial_results import trial_result


def plain_text(renderable: RenderableType) -> str:
    console = Console(file=io.StringIO(), width=200, no_color=True)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


SAME = {"run_id": "run-1", "suite_id": "s@0001", "suite_version": "v1", "outcome": "pass"}


def test_trials_of_one_run_suite_and_version_are_not_mixed() -> None:
    results = [trial_result(t, "noop", status="completed", **SAME) for t in ("a", "b")]
    assert describe_mix(results, "run-1") == ()


def test_each_kind_of_mix_is_stated() -> None:
    results = [
        trial_result("a", "noop", status="completed", sandbox="bwrap", **SAME),
        trial_result(
            "a",
            "ref",
            status="completed",
            **{**SAME, "run_id": "run-0", "suite_version": "v0"},
            task_fingerprint="older",
            harnessdrive_version="0.0.9",
        ),
        trial_result(
            "b", "noop", status="completed", **{**SAME, "suite_id": "s@0002"}, suite_folder="/x"
        ),
    ]
    text = " ".join(describe_mix(results, "run-1"))
    assert (
        "1 of 3 trial(s) were recorded by another run of this suite and reused here: run-0" in text
    )
    assert "2 different suites: s@0001 (folder not recorded) (2), s@0002 (/x) (1)" in text
    assert "2 versions of the suite" in text
    assert "different sandboxes: bwrap (1), none (2)" in text
    assert "harnessdrive versions: 0.0.9 (1), unrecorded (2)" in text
    assert "different versions of the task (it was edited between runs): a." in text


def test_the_terminal_report_shows_the_mix_under_the_headline() -> None:
    results = [
        trial_result("a", "noop", status="completed", sandbox="bwrap", **SAME),
        trial_result("a", "ref", status="completed", **SAME),
    ]
    report = build_report(results, run_id="run-1", suite="s")
    assert report.suite_id == "s@0001"
    lines = plain_text(render_report(report)).splitlines()
    assert lines[1] == "Run run-1 of suite s@0001"
    assert lines[2].startswith("Mixed: Trials ran in different sandboxes: bwrap (1), none (1).")


def test_a_trial_of_before_suite_identities_counts_as_the_one_suite_of_its_name() -> None:
    identified = trial_result("a", "noop", status="completed", **SAME)
    old = trial_result("b", "noop", status="completed", run_id="run-1", outcome="pass")
    assert (old.suite, old.suite_id) == ("s", None)
    assert describe_mix([identified, old], "run-1") == ()
    assert build_report([identified, old], run_id="run-1").suite_id == "s@0001"
    assert build_report([old], run_id="run-1").suite_id is None

    # Another suite's name, or two identified suites of its name: the mix is stated.
    other = old.model_copy(update={"suite": "other"})
    assert describe_mix([identified, other], "run-1") == (
        "Trials come from 2 different suites: other (folder not recorded) (1), "
        "s@0001 (folder not recorded) (1).",
    )
    second = trial_result("c", "noop", status="completed", **{**SAME, "suite_id": "s@0002"})
    assert build_report([identified, other], run_id="run-1").suite_id is None
    (line,) = describe_mix([identified, old, second], "run-1")
    assert line.startswith("Trials come from 3 different suites: s (folder not recorded) (1)")
