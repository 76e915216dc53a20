"""Whether a task's limits leave its reference room: a task whose reference solution needs most
of a limit on an idle machine fails right solutions on a busy one, so it is not a valid task."""

from __future__ import annotations

from harnessdrive.grading.verdict import Verdict
from harnessdrive.tasks.loading import Task

MOST_OF_A_LIMIT = 0.5
"""The share of a limit the reference may take; more leaves too little room."""


def room_problems(task: Task, reference: Verdict) -> list[str]:
    """What the reference's passing grading took of the task's limits, where it took too much."""
    problems = []
    setup = reference.setup
    limit = task.spec.setup.timeout
    if setup is not None and setup.seconds > MOST_OF_A_LIMIT * limit:
        problems.append(_problem("setup", setup.seconds, limit, "setup.timeout"))
    grading = getattr(task.spec.grade, "timeout", None)
    runs = [run for run in (reference.hidden, reference.visible) if run is not None]
    if isinstance(grading, int | float):
        for run in runs:
            if run.seconds > MOST_OF_A_LIMIT * grading:
                problems.append(_problem("tests", run.seconds, float(grading), "grade.timeout"))
                break
    return problems


def _problem(what: str, seconds: float, limit: float, setting: str) -> str:
    return (
        f"the reference's {what} took {seconds:.1f} s of the {limit:g} s limit ({setting}): "
        f"more than {MOST_OF_A_LIMIT:.0%} leaves right solutions too little room; raise it"
    )
