"""The demo end to end, through the command line: acceptance of the core loop."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.demo import DEMO_SUITE
from tests.trial_results import trial_folder


@pytest.fixture(scope="module")
def demo_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("demo") / "results"
    assert run_cli(["demo", "--results", str(results), "--jobs", "2"]) == 0
    return results


def report_json(results: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert run_cli(["report", "--results", str(results), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_demo_scoreboard_reference_passes_all_others_none(
    demo_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = report_json(demo_results, capsys)
    rows = {row["variant"]: row for row in report["harnesses"]}  # type: ignore[index]
    assert report["tasks_compared"] == 4
    assert (rows["reference"]["passed"], rows["reference"]["trials"]) == (4, 4)
    for variant in ("noop", "breaker", "tamperer"):
        assert rows[variant]["passed"] == 0
    assert rows["tamperer"]["tampered"] == 4
    tamperer = [t for t in report["trials"] if t["variant"] == "tamperer"]  # type: ignore[union-attr]
    assert len(tamperer) == 4 and all(t["outcome"] == "tampered" for t in tamperer)


def test_report_json_lists_every_trial_with_its_facts(
    demo_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trials = report_json(demo_results, capsys)["trials"]
    assert len(trials) == 16  # type: ignore[arg-type]
    needed = {
        "task",
        "harness",
        "status",
        "outcome",
        "visible_passed",
        "visible_total",
        "hidden_passed",
        "hidden_total",
        "findings",
        "files_changed",
        "lines_added",
        "lines_deleted",
        "seconds",
    }
    for trial in trials:  # type: ignore[union-attr]
        assert needed <= set(trial)
        assert trial["hidden_total"] > 0
    reference = [t for t in trials if t["harness"] == "reference"]  # type: ignore[union-attr]
    assert all(t["hidden_passed"] == t["hidden_total"] for t in reference)
    assert all(t["lines_added"] > 0 for t in reference)


def test_each_trial_folder_holds_its_artifacts(demo_results: Path) -> None:
    folder = trial_folder(demo_results, "demo/top-products/reference/r1")
    names = {p.name for p in folder.iterdir()}
    assert {
        "result.json",
        "prompt.md",
        "agent.stdout",
        "diff.patch",
        "grade-tests.log",
        "junit-tests.xml",
        "junit-visible.xml",
        "transcript.json",
    } <= names
    assert "top_products" in (folder / "diff.patch").read_text()


def test_demo_rerun_resumes_without_running_anything(
    demo_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {p: p.stat().st_mtime_ns for p in demo_results.rglob("result.json")}
    capsys.readouterr()
    assert run_cli(["demo", "--results", str(demo_results)]) == 0
    assert "16 of 16 trials already recorded" in capsys.readouterr().err
    assert {p: p.stat().st_mtime_ns for p in demo_results.rglob("result.json")} == before


def test_check_passes_on_the_demo_and_names_a_broken_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["check", str(DEMO_SUITE)]) == 0
    assert "All 4 task(s) grade correctly" in capsys.readouterr().out
    copy = tmp_path / "suite"
    shutil.copytree(DEMO_SUITE, copy)
    hidden = copy / "tasks" / "weekly-totals" / "hidden" / "test_spec_weekly-totals.py"
    hidden.write_text("def test_nothing_to_see():\n    assert True\n")
    # With only a trivially passing hidden test and visible tests that pass at base, the
    # untouched repository passes: the task cannot tell work from no work.
    assert run_cli(["check", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "weekly-totals: the hidden tests already pass on the untouched repository" in out
    assert "1 of 4 task(s) broken: weekly-totals" in out
