"""The pytest plugin with scripted agents: cells run as trials, the session report, the secrets
an agent cannot read, replay, the dry-run forecast, and collection that stops on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.harnesses.cli.binaries import binary_variable
from harnessdrive.pytest_plugin.replay import replay
from harnessdrive.store.results import TrialResult
from tests.plugin.evalproject import SECRET_EVAL, spy, write_matrix_case, write_project

pytest_plugins = ["pytester"]


def session_folders(root: Path) -> list[Path]:
    return sorted(p for p in (root / ".harnessdrive" / "evals").iterdir() if p.name[0].isdigit())


def session_folder(root: Path) -> Path:
    (folder,) = session_folders(root)
    return folder


def test_cells_run_as_trials_and_the_session_is_reported(pytester: pytest.Pytester) -> None:
    root = write_project(pytester.path, greet_models=[spy(pytester.path)])

    run = pytester.runpytest("skills/greet/evals", "-v")

    run.assert_outcomes(passed=2, failed=1)
    out = run.stdout.str()
    # One readable node id per cell; the live line says verdict, cost, tokens, time, turns, tools.
    assert "eval_greet.py::eval_hello[spy] PASSED  pass" in out
    assert "eval_greet.py::eval_add[reference] PASSED  pass" in out
    assert "eval_greet.py::eval_add[noop] FAILED  fail" in out
    assert "the task's grader says fail" in out
    assert "matrix scope = case" in out
    folder = session_folder(root)
    report = json.loads((folder / "report.json").read_text())
    html = (folder / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "eval_greet.eval_add" in html
    assert len(report["details"]) == 3
    assert report["run_id"] == folder.name
    assert sorted((t["variant"], t["outcome"]) for t in report["trials"]) == [
        ("noop", "fail"),
        ("reference", "pass"),
        ("spy", "pass"),
    ]
    # Every cell is a trial in the session's results store, with the case's verdict in it.
    results = {
        r.variant_label: (r, p.parent)
        for p in (folder / "main" / "trials").rglob("result.json")
        if (r := TrialResult.model_validate_json(p.read_text()))
    }
    assert {label: r.outcome for label, (r, _) in results.items()} == {
        "spy": "pass",
        "reference": "pass",
        "noop": "fail",
    }
    spy_result, spy_folder = results["spy"]
    assert spy_result.base_commit  # the workspace was a git repository
    assert spy_result.sandbox == "bwrap"
    # The skill went in the prompt (the command harness has no skills of its own).
    prompt = (spy_folder / "prompt.md").read_text()
    assert "Use the skill 'greet'" in prompt and prompt.endswith("Task: say hello")
    # Replay: no agent, the same grader verdict on the stored final workspace.
    reference_folder = results["reference"][1]
    replayed = replay(reference_folder)
    assert replayed.grader_outcome == replayed.stored_grader_outcome == "pass"
    noop_again = replay(results["noop"][1])
    assert noop_again.grader_outcome == "fail"

    # --replay of the session: the case functions run again on the rebuilt final workspaces,
    # with the stored verdicts, and a new report with the same rows; nothing runs.
    again = pytester.runpytest_subprocess("skills/greet/evals", "--replay", str(folder), "-v")
    again.assert_outcomes(passed=2, failed=1)
    assert "eval_greet.py::eval_add[noop] FAILED  fail" in again.stdout.str()
    (replayed,) = [p for p in session_folders(root) if p != folder]
    rows = json.loads((replayed / "report.json").read_text())["trials"]
    assert rows == report["trials"]
    assert not (replayed / "main").exists()

    # The spy is able to find them: without the sandbox the same cell reads the eval file.
    bare = pytester.runpytest("skills/greet/evals", "-k", "spy", "--eval-sandbox", "none")
    bare.assert_outcomes(failed=1, deselected=2)
    assert SECRET_EVAL in bare.stdout.str()


PRICED = [
    "claude/claude-sonnet-4-5",
    "claude/claude-sonnet-4-5/high",
    "claude/claude-haiku-4-5/min",
    "codex/gpt-5.5/max",
    "codex/gpt-5.5/mid",
]


def test_dry_run_forecasts_every_cell_and_runs_nothing(pytester: pytest.Pytester) -> None:
    write_matrix_case(pytester.path, PRICED, repeat=10, name="terse")

    run = pytester.runpytest("evals", "--dry-run", "-q")

    run.assert_outcomes()  # nothing ran; pytest lists the cells as --collect-only does
    out = run.stdout.str()
    assert "100 tests collected" in out
    assert "evals/eval_terse.py::eval_tidy[codex/gpt-5.5/xhigh+terse#10]" in out
    forecasts = json.loads((session_folder(pytester.path) / "forecast.json").read_text())
    assert len(forecasts) == 100
    assert all(0 < f["low"] <= f["high"] for f in forecasts), forecasts[0]
    # Aliases resolve by position on each harness's own ladder; the node id carries the rung.
    cells = {f["cell"].split("#")[0] for f in forecasts}
    assert "claude/claude-haiku-4-5/low" in cells and "codex/gpt-5.5/xhigh+terse" in cells
    assert "total forecast: $" in out and "across 100 cell(s)" in out
    assert "forecast computed in" in out
    # How wide, and why: cells without an effort span the whole assumption; a cell with one
    # takes its rung's part of it, so low and max no longer get the same range.
    assert "x wide: 20 cell(s) from token assumptions (a short run to a long one" in out
    assert "80 cell(s) from token assumptions narrowed by effort" in out
    ranges = {f["cell"].split("#")[0]: (f["low"], f["high"], f["basis"]) for f in forecasts}
    plain, high = ranges["claude/claude-sonnet-4-5"], ranges["claude/claude-sonnet-4-5/high"]
    assert plain[2] == "assumption" and high[2] == "assumption, effort high"
    assert plain[0] < high[0] < high[1] < plain[1]  # a narrower part of the same span
    mid, top = ranges["codex/gpt-5.5/medium"], ranges["codex/gpt-5.5/xhigh"]
    assert mid[0] < top[0] and mid[1] < top[1]  # a higher rung, a higher window
    assert not (session_folder(pytester.path) / "main").exists()  # no trial started


def test_bad_input_stops_collection_before_anything_runs(pytester: pytest.Pytester) -> None:
    bad = {
        "rung": (["noop", "claude/claude-sonnet-4-5/minimal"], "claude has no effort 'minimal'"),
        "unpriced": (["noop", "claude/no-such-model-9"], "cannot price"),
        "unknown": (["noop", "nosuchharness/x"], "nosuchharness"),
        "efftypo": (
            ["noop", "claude/claude-sonnet-4-5/hihg"],
            "'hihg' is not an effort of claude (did you mean 'high'?)",
        ),
        "modeltypo": (["noop", "claude/claude-sonet-4-5"], "(did you mean 'claude-sonnet-4-5'?)"),
        "uncapped": (
            ["claude/claude-sonnet-4-5"],
            "set a spend cap for the session with --max-usd",
        ),
    }
    for name, (models, _) in bad.items():
        write_matrix_case(pytester.path, models, name=name)
    write_matrix_case(
        pytester.path, ["claude/claude-sonnet-4-5"], treatment=["AGENTS.md"], name="treated"
    )

    arguments = {
        "typo": ("'tidy', fixture='start', model=['noop']", "model (did you mean models?)"),
        "strmodels": ("'tidy', fixture='start', models='noop'", "models= must be a list"),
        "repeat": ("'tidy', fixture='start', models=['noop'], repeat=0", "repeat= must be"),
        "timeout": ("'tidy', fixture='start', models=['noop'], timeout='9'", "timeout= must"),
        "golden": ("'tidy', fixture='start', golden='../../x'", "golden= is a name"),
        # The fixture folder '..' (fixtures/..) would copy the eval file and goldens to the agent.
        "leak": ("'tidy', fixture='..', models=['noop']", "which no agent may see"),
        # A skill folder holding the eval file outside its own evals/ would ship it.
        "skilled": ("'tidy', fixture='start', skill='.'", "keep a skill's cases under its own"),
    }
    (pytester.path / "evals" / "SKILL.md").write_text("# a skill beside its eval files\n")
    evals = pytester.path / "evals"
    for name, (args, _) in arguments.items():
        (evals / f"eval_{name}.py").write_text(
            f"import harnessdrive\n\n@harnessdrive.evalcase({args})\ndef eval_tidy(output):\n"
            "    pass\n"
        )
    (evals / "eval_bare.py").write_text(
        "import harnessdrive\n\n@harnessdrive.evalcase\ndef eval_tidy(output):\n    pass\n"
    )
    arguments["bare"] = ("", "not bare @evalcase")

    run = pytester.runpytest("evals")

    run.assert_outcomes(errors=len(bad) + 1 + len(arguments))
    out = run.stdout.str()
    for name, (_, message) in {**bad, **arguments}.items():
        assert f"eval_{name}.py::eval_tidy: " in out and message in out, name
    assert "treatment 'treated' has no files for claude" in out
    assert f"Interrupted: {len(bad) + 1 + len(arguments)} errors during collection" in out
    assert "Traceback" not in out

    for args, message in (
        (["--replay", "no-such-session"], "--replay no-such-session: no such folder"),
        (["--replay", ".", "--dry-run"], "--replay and --dry-run: choose one"),
    ):
        refused = pytester.runpytest("evals", *args)
        assert refused.ret == pytest.ExitCode.USAGE_ERROR
        assert f"ERROR: {message}" in refused.stderr.str()


def test_a_missing_cli_fails_the_session_unless_skipping_is_asked_for(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_matrix_case(pytester.path, ["claude/claude-sonnet-4-5"], treatment=["CLAUDE.md"])
    monkeypatch.setenv(binary_variable("claude"), str(pytester.path / "no-such-claude"))

    run = pytester.runpytest("evals", "--max-usd", "1")

    run.assert_outcomes(skipped=2)
    assert run.ret == pytest.ExitCode.TESTS_FAILED  # nothing was evaluated: CI must not pass
    out = run.stdout.str()
    cause = "claude is not installed: not found; point $HARNESSDRIVE_CLAUDE_BINARY at"
    # Said once for its two cells, without -rs.
    assert out.count(cause) == 1, out
    assert "2 cell(s) could not run: the session fails; pass --eval-allow-unavailable" in out
    assert "(2 cell(s))" in out
    assert "FileNotFoundError" not in out

    allowed = pytester.runpytest("evals", "--max-usd", "1", "--eval-allow-unavailable")

    allowed.assert_outcomes(skipped=2)
    assert allowed.ret == pytest.ExitCode.OK
    assert "2 cell(s) could not run: skipped (--eval-allow-unavailable)" in allowed.stdout.str()


def test_ordinary_runs_stay_inert(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    pytester.makepyfile(eval_stray="raise SystemExit('an eval_ file outside evals/ is not ours')")

    run = pytester.runpytest()

    run.assert_outcomes(passed=1)
    # Loading the entry point imports nothing of harnessdrive.
    probe = (
        "import sys, harnessdrive_pytest; "
        "print(sorted(m for m in sys.modules if m.startswith('harnessdrive')))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert shown.stdout.strip() == "['harnessdrive_pytest']"
