"""After a run: tasks whose results suggest the task, not the agents, is at fault.

- no arm ever solved it (every finished trial of two or more arms failed): the task may be
  unsolvable as written;
- the ``noop`` arm passed it: doing nothing passes;
- its outcome flips between repeats of the same arm far more than other tasks' do: the grading
  or the task is flaky.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from itertools import pairwise

from harnessdrive.store.results import TrialResult

_FLIP_FLOOR = 0.5
"""A task's flip rate must reach this as well as twice the median to be a suspect."""


def suspect_notes(finished: Sequence[TrialResult]) -> list[str]:
    """One note per suspect task with its evidence, in the order tasks first appear."""
    by_task: dict[str, list[TrialResult]] = defaultdict(list)
    for result in finished:
        by_task[result.task].append(result)
    flips = {task: _flip_rate(results) for task, results in by_task.items()}
    measured = [rate for rate in flips.values() if rate is not None]
    typical = statistics.median(measured) if measured else 0.0
    notes = []
    for task, results in by_task.items():
        arms = {r.variant_label for r in results}
        if len(arms) >= 2 and not any(r.outcome == "pass" for r in results):
            notes.append(
                f"Suspect task {task}: no arm ever solved it ({len(results)} trials of "
                f"{len(arms)} arms all failed); check that it can be solved as written."
            )
        noop = [r for r in results if r.harness == "noop" and r.outcome == "pass"]
        if noop:
            notes.append(
                f"Suspect task {task}: the noop arm passed it ({len(noop)} trial(s)), so doing "
                "nothing passes."
            )
        rate = flips[task]
        if rate is not None and rate >= _FLIP_FLOOR and rate > 2 * typical:
            notes.append(
                f"Suspect task {task}: its outcome flips between repeats of the same arm in "
                f"{rate:.0%} of consecutive pairs (median over tasks {typical:.0%})."
            )
    return notes


def _flip_rate(results: list[TrialResult]) -> float | None:
    """Share of consecutive repeats of one arm whose outcomes differ; None without repeats."""
    by_arm: dict[str, list[TrialResult]] = defaultdict(list)
    for result in results:
        by_arm[result.variant_label].append(result)
    pairs = changes = 0
    for runs in by_arm.values():
        ordered = [r.outcome for r in sorted(runs, key=lambda r: r.repetition)]
        for before, after in pairwise(ordered):
            pairs += 1
            changes += before != after
    return changes / pairs if pairs else None
