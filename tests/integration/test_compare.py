"""Acceptance of the paired statistics through the command line: arm A passes 9 of 12 tasks
and B 3 of 12, each repeated; one task alone proves nothing; a coin flip repeated five times
is a flaky task. The arms are the seeded chance agent, so every verdict is known before."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.testing.suites import TaskFiles, write_suite

# One worker runs the module, so its shared fixtures are built once (tests/conftest.py).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("compare")]

CHANCE = "harnessdrive.testing.chance:ChanceAgent"
TASKS = [f"t{i:02d}" for i in range(12)]


def _task(task_id: str) -> TaskFiles:
    # A shell check keeps each trial's grading cheap; the statistics do not care what decides.
    return TaskFiles(
        task_id,
        files={"state.txt": "broken\n"},
        hidden={"check.sh": "grep -qx fixed state.txt\n"},
        solution={"state.txt": "fixed\n"},
        command="sh check.sh",
    )


def _arm(name: str, solved: int) -> dict[str, Any]:
    rates = {task: 1.0 if i < solved else 0.0 for i, task in enumerate(TASKS)}
    return {"harness": CHANCE, "name": name, "options": {"tasks": {**rates, "flip": 1.0}}}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("paired")
    folder = parent / "results"
    arms = [_arm("A", 9), _arm("B", 3)]
    paired = write_suite(parent, [_task(t) for t in TASKS], name="paired", variants=arms)
    coin = {"harness": CHANCE, "name": "coin", "options": {"rate": 0.5, "seed": 1}}
    flip = write_suite(parent, [_task("flip")], name="flip", variants=[*arms, coin])
    common = ["--sandbox", "none", "--jobs", "2", "--results", str(folder)]
    assert run_cli(["run", str(paired), "--repeat", "2", *common]) == 0
    assert run_cli(["run", str(flip), "-H", "coin", "--repeat", "5", *common]) == 0
    assert run_cli(["run", str(flip), "-H", "A,B", *common]) == 0
    return folder


def _runs(results: Path) -> dict[str, str]:
    """Run ids by suite and arms: ``paired``, ``flip:coin`` and ``flip:A,B``."""
    found = {}
    for path in (results / "runs").glob("*.json"):
        manifest = json.loads(path.read_text())
        names = ",".join(v["name"] for v in manifest["variants"])
        found[manifest["suite"] if manifest["suite"] == "paired" else f"flip:{names}"] = manifest[
            "run_id"
        ]
    return found


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert run_cli(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_nine_of_twelve_is_better_than_three_with_its_interval(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _runs(results)["paired"]
    where = ["--results", str(results), "--run", run]
    found = _json(capsys, "compare", "A", "B", *where, "--json")
    assert found["verdict"] == "better"
    assert len(found["tasks"]) == 12 and (found["wins"], found["losses"], found["ties"]) == (
        6,
        0,
        6,
    )
    assert all(t["first_trials"] == t["second_trials"] == 2 for t in found["tasks"])
    assert found["difference"] == 0.5 and 0 < found["interval"]["low"] < 0.5
    assert found["interval"]["high"] > 0.5
    assert found["p_value"] == pytest.approx(2 / 2**6)
    assert (found["seed"], found["family"], found["threshold"]) == (0, 1, 0.05)
    assert found["test"].startswith("sign-flip permutation test") and "exact" in found["test"]
    assert found["p_better"] > 0.95 and found["reason"] is None
    capsys.readouterr()
    assert run_cli(["compare", "B", "A", *where]) == 0
    text = capsys.readouterr().out
    assert re.search(r"B against A: worse: -50 points \[-\d\d, -\d\d\] \(95% interval", text)
    assert "t03" in text and "0/2" in text and "2/2" in text
    # The same seed gives the same figures; read from B's side they mirror.
    assert _json(capsys, "compare", "A", "B", *where, "--json") == found
    mirrored = _json(capsys, "compare", "B", "A", *where, "--json")
    assert mirrored["verdict"] == "worse" and mirrored["difference"] == -0.5
    few = _json(capsys, "compare", "A", "B", *where, "--json", "--min-tasks", "13")
    assert few["verdict"] == "inconclusive"
    assert few["reason"] == "12 tasks in common; a verdict needs at least 13"


def test_one_task_is_not_enough_and_has_no_interval(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _runs(results)["flip:A,B"]
    found = _json(capsys, "compare", "A", "B", "--results", str(results), "--run", run, "--json")
    assert found["verdict"] == "inconclusive" and found["reason"].startswith("1 task in common")
    assert len(found["tasks"]) == 1 and found["interval"] is None
    # Over the two runs of A and B the tasks of both suites pair: 13 in all.
    runs = _runs(results)
    both = _json(
        capsys,
        "compare",
        "A",
        "B",
        "--results",
        str(results),
        "--run",
        runs["paired"],
        "--run",
        runs["flip:A,B"],
        "--json",
    )
    assert len(both["tasks"]) == 13 and both["verdict"] == "better"
    assert {t["task"] for t in both["tasks"]} >= {"flip/flip", "paired/t00"}


def test_a_coin_flip_repeated_five_times_is_flagged_flaky(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _runs(results)["flip:coin"]
    report = _json(capsys, "report", run, "--results", str(results), "--json")
    flaky = report["statistics"]["flaky"]
    assert flaky == [
        {
            "task": "flip",
            "variant": "coin",
            "passes": 3.0,
            "trials": 5,
            "reason": "agent's spread across repeats",
        }
    ]
    coin = next(a for a in report["statistics"]["arms"] if a["variant"] == "coin")
    assert list(coin["pass_at_k"]) == ["1", "2", "3", "4", "5"]
    assert coin["pass_at_k"]["1"] == 0.6 and coin["pass_at_k"]["3"] == 1.0
    assert coin["pass_hat_k"]["2"] == pytest.approx(0.3)
    assert [r["versus_best"] for r in report["harnesses"]] == ["best"]
    capsys.readouterr()
    assert run_cli(["report", run, "--results", str(results)]) == 0
    text = capsys.readouterr().out
    assert "Flaky, agent's spread across repeats: flip (coin, 3 of 5)." in text
    assert "over tasks and their repeats: coin 60% (23–88%)." in text
    run = _runs(results)["flip:A,B"]
    capsys.readouterr()
    assert run_cli(["report", run, "--results", str(results)]) == 0
    text = capsys.readouterr().out
    assert "A against B: inconclusive" in text and "1 task in common" in text


def test_the_scoreboard_shows_intervals_and_the_verdict_against_the_best(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _runs(results)["paired"]
    report = _json(capsys, "report", run, "--results", str(results), "--json")
    rows = {r["variant"]: r for r in report["harnesses"]}
    assert rows["A"]["interval"]["low"] < 0.75 < rows["A"]["interval"]["high"]
    assert rows["B"]["versus_best"] == "worse"
    assert (rows["A"]["hidden_passed"], rows["A"]["hidden_trials"]) == (18, 24)
    pairs = report["statistics"]["comparisons"]
    assert [(c["first"], c["second"], c["verdict"]) for c in pairs] == [("A", "B", "better")]
    assert report["headline"].startswith("Best: A, 75% of tasks [")
    assert "better than B by 50 points" in report["headline"]
    # compare makes the report's comparison, figure for figure; it adds the provenance and
    # what the audit left out, which the report shows once for all its comparisons.
    found = _json(capsys, "compare", "A", "B", "--results", str(results), "--run", run, "--json")
    assert found["trust"]["not_audited"] == report["trust"]["not_audited"]
    assert {**found, "provenance": [], "trust": None} == {**pairs[0], "provenance": []}
    mirrored = _json(capsys, "compare", "B", "A", "--results", str(results), "--run", run, "--json")
    assert (mirrored["verdict"], mirrored["p_value"]) == ("worse", pairs[0]["p_value"])
    assert [(a["variant"], a["rank"]) for a in report["statistics"]["arms"]] == [("A", 1), ("B", 2)]
    assert len(report["details"]) == 48
    assert all(
        d["diff"] is not None and d["folder"].startswith("trials/") for d in report["details"]
    )


def test_a_folder_report_page_holds_every_trial_of_every_run(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert run_cli(["report", "--all", "--format", "html", "--results", str(results)]) == 0
    page = (results / "report.html").read_text()
    trials = set(re.findall(r'data-trial="([^"]+)"', page))
    assert len(trials) == 48 + 5 + 2
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert 'href="trials/' in page and "http://" not in page.split("</head>")[1]
    # Written elsewhere, its links still lead to the trial folders, relative to the page.
    elsewhere = tmp_path / "shared" / "page.html"
    elsewhere.parent.mkdir()
    argv = ["report", "--all", "--format", "html", "--results", str(results), "-o", str(elsewhere)]
    assert run_cli(argv) == 0
    link = re.search(r'Files: <a href="([^"]+)/">', elsewhere.read_text())
    assert link is not None and (elsewhere.parent / link.group(1) / "diff.patch").is_file()
    umask = os.umask(0)
    os.umask(umask)
    assert elsewhere.stat().st_mode & 0o777 == 0o666 & ~umask  # as any new file, to be shared


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compare", "A", "Z"], "no finished trial of an arm named 'Z'"),
        (["compare", "A", "A"], "two different arms"),
        (["compare", "A", "B", "--confidence", "1.5"], "--confidence"),
        (["report", "--all", "x"], "--all and the run"),
    ],
)
def test_bad_comparisons_are_one_line_and_exit_2(
    results: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    capsys.readouterr()
    assert run_cli([*argv, "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err
