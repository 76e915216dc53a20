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
from harnessdrive.pytest_plugin.verifiers import *  # noqa: F403
from harnessdrive.pytest_plugin.verifiers import __all__ as _verifiers

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
    "check_golden",
    "evalcase",
    *_verifiers,
]
