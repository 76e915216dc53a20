"""One truth: the verdict pytest reports for a cell is the outcome the store keeps and the
session report counts, whatever matrix each case has."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.report.arm_inputs import arm_inputs
from harnessdrive.stats.decisions import decide
from harnessdrive.store.results import TrialResult
from tests.plugin.test_pytest_plugin import session_folder, session_folders

pytest_plugins = ["pytester"]


def command(name: str, script: str) -> dict[str, object]:
    return {"harness": "command", "name": name, "options": {"template": f"sh -c '{script}'"}}


WRITER = command("writer", "echo done > OUT.md")
LAZY = command("lazy", "true")
BROKEN = command("broken", "echo done > OUT.md; exit 3")


def write_trio(root: Path) -> None:
    """Three cases, each with a matrix of its own; ``eval_two`` asserts nothing."""
    evals = root / "evals"
    (evals / "fixtures" / "start").mkdir(parents=True)
    (evals / "fixtures" / "start" / "README.md").write_text("start\n")
    (evals / "eval_trio.py").write_text(
        "import harnessdrive\n\n"
        f"@harnessdrive.evalcase('write OUT.md', fixture='start', models={[WRITER, LAZY]!r})\n"
        "def eval_one(output):\n"
        "    assert output.exists('OUT.md'), 'no OUT.md'\n\n"
        f"@harnessdrive.evalcase('write OUT.md', fixture='start', models={[WRITER, BROKEN]!r})\n"
        "def eval_two(output):\n"
        "    pass\n\n"
        f"@harnessdrive.evalcase('write OUT.md', fixture='start', models={[LAZY, WRITER]!r})\n"
        "def eval_three(output):\n"
        "    raise RuntimeError('the case itself is broken')\n"
    )
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")


def harnessdrive(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "harnessdrive", *args], capture_output=True, text=True, check=True
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def stored(folder: Path) -> dict[tuple[str, str], TrialResult]:
    found = {}
    for path in (folder / "main" / "trials").rglob("result.json"):
        if "previous" in path.parts:
            continue
        result = TrialResult.model_validate_json(path.read_text())
        found[(result.task.split(".")[-1].removeprefix("eval_"), result.variant_label)] = result
    return found


def test_three_cases_with_their_own_matrices_are_all_reported_as_pytest_judged_them(
    pytester: pytest.Pytester,
) -> None:
    write_trio(pytester.path)

    run = pytester.runpytest("evals", "-v", "-p", "no:randomly")

    run.assert_outcomes(passed=2, failed=4)
    out = run.stdout.str()
    assert "eval_two[broken] FAILED" in out
    assert "broken: the agent's run crashed" in out
    verdicts = {
        "one": {"writer": "pass", "lazy": "fail"},
        "two": {"writer": "pass", "broken": "fail"},
        "three": {"lazy": "fail", "writer": "fail"},
    }
    folder = session_folder(pytester.path)
    records = stored(folder)
    # The store keeps what pytest said: a crash the case never looked at is not a pass, nor is
    # a case that raised.
    assert {(case, v): r.outcome for (case, v), r in records.items()} == {
        (case, v): o for case, arms in verdicts.items() for v, o in arms.items()
    }
    assert records[("three", "writer")].metrics["case_error"] == 1.0
    assert "RuntimeError: the case itself is broken" in str(records[("three", "writer")].note)

    report = json.loads((folder / "report.json").read_text())
    # Every cell is counted: three tasks, each arm over the cases it ran.
    assert report["tasks_compared"] == 3
    rows = {row["variant"]: row for row in report["harnesses"]}
    assert {v: (row["passed"], row["trials"]) for v, row in rows.items()} == {
        "writer": (2, 3),
        "lazy": (0, 2),
        "broken": (0, 1),
    }
    assert not report["mixed"], report["mixed"]  # each cell a run of its own is no mix
    assert "On 0 tasks" not in report["headline"]
    # The same rates and ranks the comparison model gives on the stored records.
    trials = list(records.values())
    decided = decide(arm_inputs(trials, ["writer", "lazy", "broken"]))
    model = {arm.name: (arm.rank, round(arm.rate, 4)) for arm in decided.arms}
    shown = {
        arm["variant"]: (arm["rank"], round(arm["pass_rate"], 4))
        for arm in report["statistics"]["arms"]
    }
    assert shown == model
    assert report["headline"] == report["statistics"]["answer"]

    # harnessdrive report and compare read the session folder as the session's report does.
    again = harnessdrive("report", "--results", str(folder), "--json")
    assert again["harnesses"] == report["harnesses"]
    assert again["statistics"]["comparisons"] == report["statistics"]["comparisons"]
    shown_pair = harnessdrive("compare", "writer", "lazy", "--results", str(folder), "--json")
    (pair,) = [
        c
        for c in report["statistics"]["comparisons"]
        if {c["first"], c["second"]} == {"writer", "lazy"}
    ]
    assert shown_pair["verdict"] == pair["verdict"]


def test_a_replay_that_regrades_updates_the_store_and_its_report(
    pytester: pytest.Pytester,
) -> None:
    write_trio(pytester.path)
    first = pytester.runpytest("evals", "-k", "eval_three", "-p", "no:randomly")
    first.assert_outcomes(failed=2)
    folder = session_folder(pytester.path)
    evals = pytester.path / "evals" / "eval_trio.py"
    # The case is fixed: a replay grades the stored cells again with it.
    evals.write_text(
        evals.read_text().replace(
            "raise RuntimeError('the case itself is broken')", "assert output.exists('OUT.md')"
        )
    )

    again = pytester.runpytest_subprocess("evals", "-k", "eval_three", "--replay", str(folder))

    again.assert_outcomes(passed=1, failed=1)
    (replayed,) = [p for p in session_folders(pytester.path) if p != folder]
    rows = json.loads((replayed / "report.json").read_text())["trials"]
    assert sorted((row["variant"], row["outcome"]) for row in rows) == [
        ("lazy", "fail"),
        ("writer", "pass"),
    ]
    records = stored(folder)
    assert records[("three", "writer")].outcome == "pass"
    assert "case_error" not in records[("three", "writer")].metrics


def test_no_cell_leaves_a_temporary_folder_behind(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_trio(pytester.path)
    # The program itself is missing (harnessdrive looks for it): inside `sh -c` its 127 would
    # be the shell's own word, and graded.
    missing = {"harness": "command", "name": "missing", "options": {"template": "no-such-4711"}}
    evals = pytester.path / "evals" / "eval_trio.py"
    evals.write_text(
        evals.read_text()
        + f"\n@harnessdrive.evalcase('write OUT.md', fixture='start', models={[missing]!r})\n"
        "def eval_four(output):\n    pass\n"
    )
    scratch = pytester.path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))

    # A pass, a failed case, a crash, a case that raised, and a cell that could not run.
    run = pytester.runpytest_subprocess("evals", "-p", "no:randomly", "-rs")

    run.assert_outcomes(passed=2, failed=4, skipped=1)
    assert "command could not run" in run.stdout.str()
    assert sorted(p.name for p in scratch.iterdir() if p.name.startswith("harnessdrive-")) == []
