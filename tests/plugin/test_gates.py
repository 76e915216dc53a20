"""Gates across sessions: a session worse than its named baseline fails, with the verdict the
comparison model gives the two sessions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.pytest_plugin.gates import compare_sessions, session_trials
from harnessdrive.report.verdicts import describe
from tests.plugin.test_one_truth import command, harnessdrive
from tests.plugin.test_pytest_plugin import session_folders

pytest_plugins = ["pytester"]

CONFTEST = """
import os
from harnessdrive.pytest_plugin.gates import (
    expect_at_least, expect_no_regression, expect_pareto_contains,
)

def pytest_harnessdrive_gates(config):
    baseline = os.environ.get("EVAL_BASELINE")
    if not baseline:
        return []
    return [
        expect_no_regression("agent", baseline=baseline, margin=0.1),
        expect_at_least("agent", 0.5),
        expect_pareto_contains("agent"),
    ]
"""


def write_cases(root: Path, script: str) -> None:
    evals = root / "evals"
    (evals / "fixtures" / "start").mkdir(parents=True, exist_ok=True)
    (evals / "fixtures" / "start" / "README.md").write_text("start\n")
    (evals / "eval_gate.py").write_text(
        "import pytest\nimport harnessdrive\n\n"
        "@pytest.mark.parametrize('n', range(6))\n"
        "@harnessdrive.evalcase('write OUT.md ({n})', fixture='start', "
        f"models=[{command('agent', script)!r}])\n"
        "def eval_write(output, n):\n"
        "    assert output.exists('OUT.md'), 'no OUT.md'\n"
    )
    (root / "conftest.py").write_text(CONFTEST)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")


def test_a_session_worse_than_its_baseline_fails_with_the_comparison_s_verdict(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_cases(pytester.path, "echo done > OUT.md")
    first = pytester.runpytest("evals", "-p", "no:randomly")
    first.assert_outcomes(passed=6)
    (baseline,) = session_folders(pytester.path)

    write_cases(pytester.path, "true")  # the agent no longer does the work
    # A prefix names it, long enough to be unique (both sessions may start within a second).
    named = baseline.name[: len(baseline.name) - 2]
    monkeypatch.setenv("EVAL_BASELINE", named)

    second = pytester.runpytest("evals", "-p", "no:randomly")

    second.assert_outcomes(failed=6)
    assert second.ret == pytest.ExitCode.TESTS_FAILED
    (current,) = [p for p in session_folders(pytester.path) if p != baseline]
    found = compare_sessions(
        session_trials(current),
        session_trials(baseline),
        "agent",
        baseline_name=baseline.name,
        margin=0.1,
    )
    assert found.verdict == "worse"
    out = second.stdout.str()
    assert (
        f"gate FAILED: expect_no_regression('agent', baseline={named!r}, "
        f"margin=0.1): {describe(found)}"
    ) in out
    assert "gate FAILED: expect_at_least('agent', 0.5): pass rate 0.00" in out
    assert "gate holds: expect_pareto_contains('agent')" in out
    # The command line compares the two sessions the same way, with the same verdict.
    where = ["--results", str(current), "--baseline", str(baseline), "--margin", "0.1"]
    shown = harnessdrive("compare", "agent", *where, "--json")
    assert (shown["verdict"], shown["wins"], shown["losses"]) == (
        "worse",
        found.wins,
        found.losses,
    )
    text = subprocess.run(
        [sys.executable, "-m", "harnessdrive", "compare", "agent", *where],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert describe(found) in " ".join(text.split())
    refused = subprocess.run(
        [sys.executable, "-m", "harnessdrive", "compare", "agent", "--results", str(current)],
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2
    assert "one arm and --baseline EARLIER" in refused.stderr


def test_a_session_as_good_as_its_baseline_passes_its_gates(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_cases(pytester.path, "echo done > OUT.md")
    pytester.runpytest("evals", "-k", "0 or 1 or 2").assert_outcomes(passed=3)
    (baseline,) = session_folders(pytester.path)
    monkeypatch.setenv("EVAL_BASELINE", baseline.name)

    again = pytester.runpytest("evals", "-k", "0 or 1 or 2")

    again.assert_outcomes(passed=3)
    assert again.ret == pytest.ExitCode.OK
    assert "gate holds: expect_no_regression('agent'" in again.stdout.str()
