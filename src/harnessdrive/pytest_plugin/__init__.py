"""Evals written once as pytest cases, run as harnessdrive trials across harness × model ×
effort × treatment (docs/pytest-plugin.md). The pytest entry point is :mod:`harnessdrive_pytest`;
a case imports :func:`evalcase`, :class:`CaseOutput` and the verifiers from here."""

from harnessdrive.pytest_plugin.case import EvalCase, evalcase
from harnessdrive.pytest_plugin.goldens import (
    Count,
    Exact,
    Facet,
    GoldenMismatch,
    Jaccard,
    Ratio,
    Superset,
    Within,
    check_golden,
)
from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput
from harnessdrive.pytest_plugin.verify import (
    check_cost_within,
    check_file_unchanged,
    check_files_written,
    check_hidden_tests_passed,
    check_no_files_added,
    check_rollout,
    check_skill_scripts_ran,
    check_skill_was_loaded,
    check_tools_used,
    check_turns_within,
)

__all__ = [
    "CannotEvaluate",
    "CaseOutput",
    "Count",
    "EvalCase",
    "Exact",
    "Facet",
    "GoldenMismatch",
    "Jaccard",
    "Ratio",
    "Superset",
    "Within",
    "check_cost_within",
    "check_file_unchanged",
    "check_files_written",
    "check_golden",
    "check_hidden_tests_passed",
    "check_no_files_added",
    "check_rollout",
    "check_skill_scripts_ran",
    "check_skill_was_loaded",
    "check_tools_used",
    "check_turns_within",
    "evalcase",
]
