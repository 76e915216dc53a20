"""A script author's view: a custom harness and a run, written against the public API only.

This file imports nothing of harnessdrive but ``harnessdrive`` and ``harnessdrive.testing``, and
one test type-checks it with mypy in strict mode, so a name dropped from the public API, or a
signature changed under a plugin author's feet, fails here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mypy import api as mypy_api

import harnessdrive
from harnessdrive import (
    AgentRequest,
    AgentRun,
    HarnessInfo,
    HarnessOptions,
    RunOptions,
    TrialResult,
    VariantSpec,
    build_report,
    execute,
    load_report,
    load_suite,
    make_plan,
    parse_options,
)
from harnessdrive.testing import TaskFiles, write_suite

HERE = Path(__file__)


class FixerOptions(HarnessOptions):
    sign: str = "+"
    """The operator the fixer writes into ``add``."""


class Fixer:
    """Rewrites ``calc.py`` with the operator its options name."""

    name = "fixer"
    options_model = FixerOptions

    def info(self) -> HarnessInfo:
        return HarnessInfo(name=self.name, installed=True, version="1")

    def check_variant(self, variant: VariantSpec) -> None:
        parse_options(FixerOptions, variant, self.name)

    def run(self, request: AgentRequest) -> AgentRun:
        options = parse_options(FixerOptions, request.variant, self.name)
        source = f"def add(a, b):\n    return a {options.sign} b\n"
        (request.workspace / "calc.py").write_text(source)
        return AgentRun(exit_code=0, timed_out=False, seconds=0.0)


def _suite(parent: Path) -> Path:
    task = TaskFiles(
        "add",
        files={"calc.py": "def add(a, b):\n    return a - b\n"},
        hidden={
            "test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
        },
        solution={"calc.py": "def add(a, b):\n    return a + b\n"},
    )
    return write_suite(parent, [task], name="typed")


def test_a_custom_harness_runs_a_suite_through_the_public_api(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path))
    factory = f"{__name__}:Fixer"
    variants = (
        VariantSpec(harness=factory, name="right"),
        VariantSpec(harness=factory, name="wrong", options={"sign": "*"}),
    )
    plan = make_plan(suite, variants, repeat=1)
    summary = execute(plan, RunOptions(results=tmp_path / "results", sandbox="none"))
    outcomes = {result.variant_label: result.outcome for result in summary.trials}
    assert outcomes == {"right": "pass", "wrong": "fail"}
    first: TrialResult = summary.trials[0]
    assert first.rounds and first.grading is not None and first.grading.grader is not None
    assert first.grading.grader.kind == "tests"
    report = load_report(tmp_path / "results")
    assert {row.variant: row.passed for row in report.harnesses} == {"right": 1, "wrong": 0}
    assert build_report(summary.trials).tasks_compared == 1


def test_an_unknown_option_of_the_custom_harness_is_refused(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path))
    variant = VariantSpec(harness=f"{__name__}:Fixer", options={"sing": "+"})
    with pytest.raises(harnessdrive.UserError, match="sing"):
        make_plan(suite, (variant,), repeat=1)


def test_this_file_type_checks_strictly_against_the_public_api() -> None:
    imports = [
        line.split()[1]
        for line in HERE.read_text().splitlines()
        if line.startswith(("from harnessdrive", "import harnessdrive"))
    ]
    assert set(imports) == {"harnessdrive", "harnessdrive.testing"}
    out, err, status = mypy_api.run(
        ["--strict", "--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}", str(HERE)]
    )
    assert status == 0, out + err
