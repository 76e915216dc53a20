"""The demo end to end, through the command line: acceptance of the core loop."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.demo import DEMO_SUITE
from harnessdrive.tasks.loading import load_suite
from tests.browser import Chromium
from tests.conftest import ARTIFACTS
from tests.trial_results import trial_folder

IMPROVE_TASK = "fewer-comparisons"
# The demo suite runs and is checked, whole; one worker runs the module, so its shared fixtures
# are built once (tests/conftest.py).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("demo")]


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
    assert report["tasks_compared"] == 6  # four on tally, one improvement, one differential
    assert (rows["reference"]["passed"], rows["reference"]["trials"]) == (6, 6)
    for variant in ("noop", "breaker", "tamperer"):
        assert rows[variant]["passed"] == 0
    assert rows["tamperer"]["tampered"] == 6
    tamperer = [t for t in report["trials"] if t["variant"] == "tamperer"]  # type: ignore[union-attr]
    assert len(tamperer) == 6 and all(t["outcome"] == "tampered" for t in tamperer)
    # Its root conftest.py lies outside the scope of every task that has one: reported apart.
    scoped = [t for t in tamperer if t["task"] != IMPROVE_TASK]
    assert all("out-of-scope" in {f["code"] for f in t["findings"]} for t in scoped)
    assert {v: rows[v]["out_of_scope"] for v in rows} == {
        "reference": 0,
        "noop": 0,
        "breaker": 0,
        "tamperer": 5,  # the improvement task names no scope
    }


def test_the_scoreboard_shows_the_improvement_curve(
    demo_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert run_cli(["report", "--results", str(demo_results)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "Improvement curve of fewer-comparisons/reference r1: 29367 -> 20741 -> 980 (30x, "
        "score 0.97, 2 of 2 rounds kept)."
    ) in out
    assert "Improvement curve of fewer-comparisons/noop r1: 29367 -> 29367 -> 29367" in out


def test_the_demo_opens_with_the_answer_and_says_why_it_is_open(
    demo_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every demo arm is a built-in baseline: none is best, and six tasks cannot decide any of
    # the six comparisons among four arms (2 / 2^6 > 0.05 / 6).
    report = report_json(demo_results, capsys)
    headline = str(report["headline"])
    assert headline.startswith("Baselines only, so no arm is best; top: reference, 100% of tasks [")
    why = "(6 tasks; with 6 comparisons a verdict needs at least 8)"
    for arm in ("noop", "breaker", "tamperer"):
        assert f"{arm} inconclusive against reference {why}" in headline
    assert report["statistics"]["answer"] == headline  # type: ignore[index]
    capsys.readouterr()
    assert run_cli(["report", "--results", str(demo_results)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith(" ".join(headline.split()))
    assert "reference against noop: inconclusive: +100 points" in out
    assert "inconclusive: 6 tasks; with 6 comparisons a verdict needs at least 8" in out


def test_report_json_lists_every_trial_with_its_facts(
    demo_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trials = report_json(demo_results, capsys)["trials"]
    assert len(trials) == 24  # type: ignore[arg-type]
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
        # A differential task has no hidden test run: its cases give a score instead.
        assert trial["task"] == "skiplist" or trial["hidden_total"] > 0
    reference = [t for t in trials if t["harness"] == "reference"]  # type: ignore[union-attr]
    assert all(t["hidden_passed"] == t["hidden_total"] for t in reference)
    assert [t["score"] for t in reference if t["task"] == "skiplist"] == [1.0]
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
    assert "24 of 24 trials already recorded" in capsys.readouterr().err
    assert {p: p.stat().st_mtime_ns for p in demo_results.rglob("result.json")} == before


@pytest.mark.timeout(900)  # the built-in cases and fixtures on six tasks, improvement trials too
def test_check_runs_every_demo_fixture_and_all_agree(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert run_cli(["check", str(DEMO_SUITE), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["ok"] is True
    declared = {task.id: [f.name for f in task.fixtures] for task in load_suite(DEMO_SUITE).tasks}
    improve = next(item for item in found["tasks"] if item["task"] == IMPROVE_TASK)
    cases = {case["name"]: (case["outcome"], case["detail"]) for case in improve["cases"]}
    assert cases == {
        "untouched": ("pass", "curve 29367 -> 29367 -> 29367"),
        "noop": ("fail", "curve 29367 -> 29367 -> 29367"),
        "reference": ("pass", "curve 29367 -> 20741 -> 980"),
        # The objective's attacks: none moves it (the forgers get no value, or the honest one).
        "attack-exit-number": ("fail", "value 29367 (baseline 29367)"),
        "attack-exit-json": ("fail", "value 29367 (baseline 29367)"),
        "attack-channels": ("fail", "could not be measured"),
        "attack-measured": ("fail", "could not be measured"),
        "attack-comment": ("fail", "value 29367 (baseline 29367)"),
    }
    assert improve["notes"] == [
        "objective spread at the baseline: ±0.0% per sample over 5 samples, ±0.0% with repeats = 1"
    ]
    for item in found["tasks"]:
        if item["task"] == IMPROVE_TASK:
            continue
        cases = {case["name"]: case for case in item["cases"]}
        assert {"untouched", "reference", "noop"} <= set(cases)
        fixtures = [case for case in item["cases"] if case["kind"] == "fixture"]
        assert [case["name"] for case in fixtures] == declared[item["task"]]
        if item["task"] != "skiplist":
            assert {case["expected"] for case in fixtures} >= {"pass", "fail", "tampered"}
        assert all(case["ok"] and case["outcome"] == case["expected"] for case in fixtures)
        if item["task"] == "skiplist":  # the differential task's fixtures are attempts, no more
            continue
        rewritten = cases["rewritten"]
        assert rewritten["lines"] > cases["reference"]["lines"]
        assert cases["naive"]["visible"] == "pass"


def _without_fixtures(suite: Path) -> None:
    shutil.rmtree(suite / "tasks" / IMPROVE_TASK)  # its rounds are proven above
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
    assert "1 of 5 tasks broken: weekly-totals" in out


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
    assert "1 of 1 task broken: top-products" in out
    assert run_cli(["check", str(task), "--json"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert found["ok"] is False
    verdicts = {c["name"]: c["ok"] for c in found["tasks"][0]["cases"] if c["kind"] == "fixture"}
    assert verdicts == {"naive": False, "rewritten": False, "tampered": True}


def test_the_demo_report_page_works_in_a_real_browser(
    demo_results: Path, chromium: Chromium, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Opened from disk: nothing logged (no error, no blocked request), every trial there,
    the charts drawn, the script working; a screenshot is kept for a person to look at."""
    report = report_json(demo_results, capsys)
    assert run_cli(["report", "--results", str(demo_results), "--format", "html"]) == 0
    page = demo_results / "report.html"
    visit = chromium.visit(page.as_uri())
    assert visit.messages == []
    shown = visit.evaluate(
        "Array.from(document.querySelectorAll('details.trial')).map(e => e.dataset.trial)"
    )
    assert sorted(shown) == sorted(t["trial_id"] for t in report["trials"])  # type: ignore[union-attr]
    trials = report["trials"]
    assert visit.evaluate("document.documentElement.dataset.ready") == str(len(trials))
    charts = visit.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('svg[data-chart]')).map("
        "e => [e.dataset.chart, e.querySelectorAll('rect, circle, polyline').length]))"
    )
    assert charts["pass-rate"] == 4 and charts["pareto"] >= 4
    # The demo's improvement task draws each of its trials' curves, round by round.
    curves = [t for t in trials if "improve.curve.1" in t["metrics"]]  # type: ignore[union-attr]
    assert curves and charts["improvement"] == len(curves)
    cells = visit.evaluate("document.querySelectorAll('#tasks td .cell').length")
    assert cells == len(report["tasks"]) * 4  # type: ignore[arg-type]
    # A drill-down holds its diff and test output, and links to the trial's own files.
    opened = visit.browser.call(
        "Runtime.evaluate",
        {
            "expression": "(() => { const d = document.querySelector("
            "'details.trial[data-outcome=pass]'); d.querySelector('summary').click();"
            " return new Promise(done => (function wait() { if (d.dataset.drawn === 'yes') {"
            " done([d.querySelector('.record-view pre.diff').textContent,"
            " d.querySelector('a[href^=trials]').getAttribute('href')]); }"
            " else { requestAnimationFrame(wait); } })()); })()",
            "awaitPromise": True,
            "returnByValue": True,
        },
        session=visit.session,
    )["result"]["value"]
    assert "diff --git" in opened[0] and opened[1].startswith("trials/demo@")
    visit.screenshot(ARTIFACTS / "demo-report.png")  # the page with one trial opened
    assert (ARTIFACTS / "demo-report.png").stat().st_size > 10_000
    filtered = visit.evaluate(
        "(() => { const f = document.getElementById('filter-arm'); f.value = 'tamperer';"
        " f.dispatchEvent(new Event('change'));"
        " return document.querySelectorAll('details.trial:not([hidden])').length; })()"
    )
    assert filtered == sum(t["variant"] == "tamperer" for t in trials)  # type: ignore[index]

    # The same checks catch a page that asks for anything or errs: the policy blocks an
    # injected request and script, and the browser says so.
    hostile = page.read_text().replace(
        "<body>", '<body><img src="https://cdn.example/x.png"><script>missing()</script>', 1
    )
    spoiled = tmp_path / "spoiled.html"
    spoiled.write_text(hostile)
    messages = " ".join(chromium.visit(spoiled.as_uri()).messages)
    assert "Content Security Policy" in messages and "cdn.example" in messages


def test_demo_runs_only_the_tasks_named_and_refuses_an_unknown_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    args = ["demo", "--harness", "reference", "--results", str(results), "--json"]
    assert run_cli([*args, "--task", "amount-parsing"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [t["task"] for t in report["trials"]] == ["amount-parsing"]
    assert run_cli([*args, "--task", "amount-parsin"]) == 2
    err = capsys.readouterr().err
    assert "no task 'amount-parsin'" in err and "did you mean 'amount-parsing'" in err
    assert len(err.strip().splitlines()) == 1
