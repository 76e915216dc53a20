"""Flaky tasks, named apart by what varies: the grading (the same change graded twice with
different results, or a reference solution that does not always pass) or the agent (its
repeats of a task made different changes and got different verdicts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harnessdrive.stats.decisions import ArmInput
from harnessdrive.store.results import TrialResult

GRADING = "grading is nondeterministic"
AGENT = "agent's spread across repeats"
REFERENCE = "reference"


@dataclass(frozen=True)
class Flaky:
    task: str
    variant: str
    passes: float
    trials: int
    reason: str


def flaky_rows(results: Sequence[TrialResult], arms: Sequence[ArmInput]) -> list[Flaky]:
    """Each (task, arm) whose repeats got different outcomes, with what varied."""
    by_cell: dict[tuple[str, str], list[TrialResult]] = {}
    for result in results:
        by_cell.setdefault((result.variant_label, result.task), []).append(result)
    found = []
    for arm in arms:
        for task, values in arm.outcomes.items():
            if len(set(values)) < 2:
                continue
            trials = by_cell.get((arm.name, task), [])
            reason = GRADING if _graded_apart(trials) or _reference(trials) else AGENT
            found.append(Flaky(task, arm.name, sum(values), len(values), reason))
    return sorted(found, key=lambda f: (f.task, f.variant))


def _reference(trials: Sequence[TrialResult]) -> bool:
    return any(t.harness == REFERENCE for t in trials)


def _graded_apart(trials: Sequence[TrialResult]) -> bool:
    """Two trials that made the same change (the same files, the same line counts and patch
    size) and got different verdicts."""
    verdicts: dict[tuple[object, ...], set[str]] = {}
    for trial in trials:
        diff = trial.diff
        change = (diff.paths, diff.lines_added, diff.lines_deleted, diff.patch_bytes)
        verdicts.setdefault(change, set()).add(trial.outcome)
    return any(len(seen) > 1 for seen in verdicts.values())
