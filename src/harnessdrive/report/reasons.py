"""What kept a trial from a verdict, in the words the scoreboard shows.

A trial may run to the end (status ``completed``) and still get no verdict: the grader could not
evaluate it. The scoreboard says so, and why, in the same words in every table.
"""

from __future__ import annotations

from harnessdrive.store.results import TrialResult

GRADED_STATUSES = ("completed", "timeout", "crashed")


def is_not_graded(result: TrialResult) -> bool:
    """The agent ran (to the end, to its time limit, or to a crash) but the grader gave no
    verdict."""
    return result.status in GRADED_STATUSES and result.outcome == "not_graded"


def failure_reason(result: TrialResult) -> str | None:
    """Why a trial has no verdict, or None when it has one or was merely put off."""
    if result.status == "could_not_run":
        return result.agent.hint or result.agent.error or result.note
    if is_not_graded(result):
        error = result.grading.error if result.grading else None
        return f"not graded: {error or result.note or 'the grader gave no reason'}"
    return None


def status_word(result: TrialResult) -> str:
    """A task cell for a trial without a verdict."""
    if is_not_graded(result):
        return "not graded"
    return result.status.replace("_", " ")
