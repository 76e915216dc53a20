"""Harnesses a run asked for that never got to work, and the fix for each.

A harness whose every trial could not run (its CLI missing, not signed in, a version without a
needed flag) or was skipped for that reason has not been compared at all; the run says so and
exits non-zero instead of leaving a scoreboard that merely lacks it.
"""

from __future__ import annotations

from collections.abc import Sequence

from harnessdrive.running.run import RunSummary


def harnesses_that_never_ran(summary: RunSummary, labels: Sequence[str]) -> dict[str, str]:
    """``{variant label: what to do}`` for each label none of whose trials got to run."""
    never: dict[str, str] = {}
    for label in labels:
        trials = [t for t in summary.trials if t.variant_label == label]
        if not trials:
            continue
        failed = [t for t in trials if t.status == "could_not_run"]
        skipped_for_it = [
            t for t in trials if t.status == "skipped" and label in summary.skipped_harnesses
        ]
        if failed and len(failed) + len(skipped_for_it) == len(trials):
            first = failed[0].agent
            never[label] = (
                summary.skipped_harnesses.get(label)
                or first.hint
                or (first.error or "it could not run")
            )
    return never
