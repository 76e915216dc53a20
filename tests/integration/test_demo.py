"""The demo end to end, through the command line: acceptance of the core loop."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.demo import DEMO_SUITE
from harnessdrive.tasks.loading import load_suite
from tests.trial_results import trial_folder

pytestmark = pytest.mark.slow  # the demo suite runs and is checked, whole


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
    # Its root conftest.py lies outside the demo's scope (tally/**): reported, counted apart.
    assert all("out-of-scope" in {f["code"] for f in t["findings"]} for t in tamperer)
    assert {v: rows[v]["out_of_scope"] for v in rows} == {
        "reference": 0,
        "noop": 0,
        "breaker": 0,
        "tamperer": 4,
    }


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


@pytest.mark.timeout(900)  # 29 gradings: the built-in cases and 13 fixtures on four tasks
def test_check_runs_every_demo_fixture_and_all_agree(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert run_cli(["check", str(DEMO_SUITE), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["ok"] is True
    declared = {task.id: [f.name for f in task.fixtures] for task in load_suite(DEMO_SUITE).tasks}
    for item in found["tasks"]:
        cases = {case["name"]: case for case in item["cases"]}
        assert {"untouched", "reference", "noop"} <= set(cases)
        fixtures = [case for case in item["cases"] if case["kind"] == "fixture"]
        assert [case["name"] for case in fixtures] == declared[item["task"]]
        assert {case["expected"] for case in fixtures} >= {"pass", "fail", "tampered"}
        assert all(case["ok"] and case["outcome"] == case["expected"] for case in fixtures)
        rewritten = cases["rewritten"]
        assert rewritten["lines"] > cases["reference"]["lines"]
        assert cases["naive"]["visible"] == "pass"


def _without_fixtures(suite: Path) -> None:
    for task_file in suite.glob("tasks/*/task.toml"):
        text = task_file.read_text()
        task_file.write_text(text[: text.index("[[check.fixtures]]")])


def test_check_names_a_broken_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "suite"
    shutil.copytree(DEMO_SUITE, copy)
    _without_fixtures(copy)  # the fixtures are proven above; this is about the built-in cases
    hidden = copy / "tasks" / "weekly-totals" / "hidden" / "test_spec_weekly-totals.py"
    hidden.write_text("def test_nothing_to_see():\n    assert True\n")
    # With only a trivially passing hidden test and visible tests that pass at base, the
    # untouched repository passes: the task cannot tell work from no work.
    capsys.readouterr()
    assert run_cli(["check", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "weekly-totals: the hidden tests already pass on the untouched repository" in out
    assert "1 of 4 task(s) broken: weekly-totals" in out


WRONG_FIXTURES = """
[[check.fixtures]]
patch = "selftest/naive.patch"
expect = "pass"                     # wrong: the hidden tests catch the naive fix

[[check.fixtures]]
overlay = "selftest/rewritten"
expect = "pass"
max_lines = 5                       # wrong: the rewrite changes more than that

[[check.fixtures]]
patch = "selftest/tampered.patch"
expect = "tampered"
findings = ["test-runner-hook"]
"""


def test_a_wrong_fixture_expectation_is_a_disagreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "suite"
    shutil.copytree(DEMO_SUITE, copy)
    _without_fixtures(copy)
    task = copy / "tasks" / "top-products"
    with (task / "task.toml").open("a") as handle:
        handle.write(WRONG_FIXTURES)
    capsys.readouterr()
    assert run_cli(["check", str(task)]) == 1
    out = capsys.readouterr().out
    assert "top-products: fixture naive: should be pass but got fail" in out
    assert "fixture rewritten: changes 22 lines, more than the declared maximum 5" in out
    assert out.count("DISAGREES") == 2 and out.count("agrees") == 1
    assert "1 of 1 task(s) broken: top-products" in out
    assert run_cli(["check", str(task), "--json"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert found["ok"] is False
    verdicts = {c["name"]: c["ok"] for c in found["tasks"][0]["cases"] if c["kind"] == "fixture"}
    assert verdicts == {"naive": False, "rewritten": False, "tampered": True}
