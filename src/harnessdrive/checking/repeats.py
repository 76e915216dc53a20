"""``check --repeat N``: the reference and the untouched repository graded N times per task,
and every task whose verdicts disagree flagged as flaky.

A grade that gives one input two verdicts cannot tell agents apart: a flaky hidden test, a
test that depends on time, order or the network. The first of the N runs is the self-test's
own case; the other N - 1 are further jobs on the same executor, submitted with the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harnessdrive.checking.cases import TaskCheck
from harnessdrive.store.results import TrialResult

RepeatedCases = dict[str, list[Callable[[], TrialResult]]]
"""Case name (``reference``, ``untouched``) -> each further run's result, when asked for."""


def flag_disagreements(
    report: TaskCheck, first: dict[str, TrialResult], further: RepeatedCases
) -> None:
    """Record every verdict of each repeated case on ``report``; a case whose verdicts differ
    is a problem of the task."""
    for name, runs in further.items():
        if name not in first:
            continue
        outcomes = [first[name].outcome, *(run().outcome for run in runs)]
        report.repeats[name] = tuple(outcomes)
        if len(set(outcomes)) > 1:
            counts = ", ".join(f"{outcomes.count(o)} {o}" for o in dict.fromkeys(outcomes))
            report.problems.append(
                f"flaky: the {name} case got different verdicts over {len(outcomes)} runs "
                f"({counts})"
            )


def repeat_folder(logs: Path, name: str, run: int) -> Path:
    return logs / f"{name}-repeat{run}"
