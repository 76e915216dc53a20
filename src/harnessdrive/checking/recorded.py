"""``check`` keeps the reference's per-test outcomes in the task folder (reference_outcomes.py)."""

from __future__ import annotations

from harnessdrive.grading import reference_outcomes
from harnessdrive.grading.verdict import Verdict
from harnessdrive.tasks.loading import Task


def record_reference(task: Task, verdict: Verdict) -> str | None:
    """Record the reference's outcomes when they differ from the task's fresh record; the note
    that says so, or None when nothing was written.

    A reference that fails a hidden test records nothing: that would make the test neutral."""
    run = verdict.hidden
    outcomes = run.hidden_outcomes if run is not None else None
    if not outcomes or "failed" in outcomes.values():
        return None
    if reference_outcomes.fresh(task) == outcomes:
        return None
    try:
        path = reference_outcomes.write(task, outcomes)
    except (OSError, ValueError) as exc:  # a test name no UTF-8 holds, a read-only folder
        return f"could not record the reference's outcomes: {exc}"
    return (
        f"recorded the reference's outcomes of {len(outcomes)} hidden tests in {path.name};"
        " grading compares with them from now on"
    )
