"""Visible against hidden tests per harness: "passes what it could see, fails the spec"."""

from __future__ import annotations

from collections.abc import Sequence

from harnessdrive.store.results import TrialResult


def split_counts(results: Sequence[TrialResult]) -> dict[str, int]:
    """How many trials ran the visible and the hidden tests, and how many passed each."""
    visible = [r.grading.visible for r in results if r.grading and r.grading.visible]
    hidden = [r.grading.hidden for r in results if r.grading and r.grading.hidden]
    return {
        "visible_passed": sum(run.succeeded for run in visible),
        "visible_trials": len(visible),
        "hidden_passed": sum(run.succeeded for run in hidden),
        "hidden_trials": len(hidden),
    }
