"""Every setting and result field is documented: a new one fails here until it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from harnessdrive.grading.kinds.tests import TestsGradeSpec
from harnessdrive.grading.verdict import Finding, GraderRef, GradingRun, Verdict
from harnessdrive.report.details import Excerpt, TrialDetail
from harnessdrive.report.scoreboard import HarnessRow, Report, TrialRow
from harnessdrive.report.statistics import (
    ArmStats,
    Comparison,
    FlakyRow,
    PairedTaskRow,
    RatioStats,
    RuleStats,
    Statistics,
)
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.check_models import CheckSpec, FixtureSpec, ScopeSpec
from harnessdrive.tasks.models import (
    GradeSpec,
    LimitsSpec,
    RepoSpec,
    SetupSpec,
    SuiteSpec,
    TaskSpec,
    VariantSpec,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"


def field_names(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


@pytest.mark.parametrize(
    ("model", "prefix"),
    [
        (TaskSpec, ""),
        (RepoSpec, "repo."),
        (SetupSpec, "setup."),
        (GradeSpec, "grade."),
        (TestsGradeSpec, "grade."),
        (LimitsSpec, "limits."),
        (ScopeSpec, "grade.scope."),
        (CheckSpec, "check."),
        (FixtureSpec, ""),
        (SuiteSpec, ""),
    ],
)
def test_every_task_and_suite_key_is_in_the_format_doc(model: type[BaseModel], prefix: str) -> None:
    text = (DOCS / "task-format.md").read_text()
    forms = (f"`{prefix}{{}}`", "`{}`", "[{}]")  # a key, or a [section] of the example
    missing = [n for n in field_names(model) if not any(f.format(n) in text for f in forms)]
    assert missing == []


def test_every_variant_key_is_in_the_format_doc() -> None:
    text = (DOCS / "task-format.md").read_text()
    assert [n for n in field_names(VariantSpec) if n not in text] == []


@pytest.mark.parametrize("model", [TrialResult, Verdict, GraderRef, GradingRun, Finding])
def test_every_result_field_is_in_the_results_doc(model: type[BaseModel]) -> None:
    text = (DOCS / "results.md").read_text()
    assert [n for n in field_names(model) if f"`{n}`" not in text] == []


@pytest.mark.parametrize("model", [Report, HarnessRow, TrialRow])
def test_every_report_field_is_in_the_results_doc(model: type[BaseModel]) -> None:
    text = (DOCS / "results.md").read_text()
    assert [n for n in field_names(model) if f"`{n}`" not in text] == []


def test_every_statistic_of_the_report_is_in_the_report_doc() -> None:
    text = (DOCS / "report.md").read_text()
    models = (Statistics, ArmStats, Comparison, PairedTaskRow, FlakyRow, RatioStats, RuleStats)
    missing = [
        f"{m.__name__}.{n}"
        for m in (*models, TrialDetail, Excerpt)
        for n in field_names(m)
        if f"`{n}`" not in text
    ]
    assert missing == []
