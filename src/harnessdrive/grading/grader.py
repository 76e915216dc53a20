"""The grading pipeline: turns an agent's change into a Verdict in a clean grading copy.

Two steps. The copy step (:mod:`harnessdrive.grading.copying`) is every kind's: tamper and scope
checks, the split of the change, a NEW copy of the base state plus the change minus protected,
restored and hidden paths, the task's setup, the hidden files. The agent never touched it. Then
the task's grader kind (``[grade] kind``, :mod:`harnessdrive.grading.kinds`) runs its checks on
that copy. The verdict it gives is completed here: the copy step's findings (tampering wins over
any outcome), what stayed out of the change, the setup run, and which grader judged, with what
arguments.
"""

from __future__ import annotations

from harnessdrive.grading.context import GradingSetup
from harnessdrive.grading.copying import SetupFailed, grading_copy, split_change
from harnessdrive.grading.kinds.base import grader_kind, kind_arguments
from harnessdrive.grading.verdict import Finding, GraderRef, Outcome, Verdict
from harnessdrive.sandbox.clock import now
from harnessdrive.workspace.changes import Changes

__all__ = ["GradingSetup", "grade"]


def grade(setup: GradingSetup, changes: Changes) -> Verdict:
    """Judge ``changes``. Raises :class:`GradingError` when it cannot evaluate."""
    started = now()
    spec = setup.task.spec.grade
    kind = grader_kind(spec.kind)
    grader = GraderRef(kind=spec.kind, args=kind_arguments(spec))
    split = split_change(setup, changes)
    setup.logs.mkdir(parents=True, exist_ok=True)
    with grading_copy(setup, split, started) as copy:
        if isinstance(copy, SetupFailed):
            verdict = Verdict(
                outcome="fail",
                findings=split.findings,
                setup=copy.setup_run,
                error=copy.reason,
            )
        else:
            judged = kind.grade(copy, spec)
            findings = (*split.findings, *judged.findings)
            verdict = judged.model_copy(
                update={
                    "outcome": _outcome(judged.outcome, findings),
                    "findings": findings,
                    "setup": copy.setup_run,
                }
            )
    return verdict.model_copy(
        update={
            "excluded_paths": split.excluded,
            "grader": grader,
            "seconds": round(now() - started, 3),
        }
    )


def _outcome(judged: Outcome, findings: tuple[Finding, ...]) -> Outcome:
    """A tampering finding makes a graded change ``tampered``, whatever the kind concluded."""
    if judged in ("pass", "fail") and any(finding.tampers for finding in findings):
        return "tampered"
    return judged
