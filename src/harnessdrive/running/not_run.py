"""Trials the machinery could not run: the run's exit status says so, and how to retry them.

A trial recorded ``could_not_run`` because of the machinery (a worker lost on every try, an
unexpected error below the trial) is not counted against its harness, and it stays recorded:
the same command run again keeps it unless ``--retry-failed`` asks for it again. A run that
leaves such trials behind exits non-zero, so a job runner sees that its results are short.
"""

from __future__ import annotations

from collections.abc import Sequence

from harnessdrive.store.results import TrialResult

MACHINERY_NOTE = "an infrastructure failure"


def machinery_failures(trials: Sequence[TrialResult]) -> list[TrialResult]:
    """The trials of ``trials`` the machinery failed (never the agent or a missing CLI)."""
    return [
        t
        for t in trials
        if t.status == "could_not_run" and (t.note or "").startswith(MACHINERY_NOTE)
    ]
