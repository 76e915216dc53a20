"""Tasks whose verdict is not stable: repeats of one arm disagree, or a reference solution
does not always pass (then the task, not the agent, is what varies)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Reason = Literal["repeats disagree", "reference does not always pass"]


@dataclass(frozen=True)
class FlakyTask:
    task: str
    arm: str
    passes: float
    trials: int
    reason: Reason


def flaky_tasks(
    arms: Mapping[str, Mapping[str, Sequence[float]]], references: Collection[str] = ()
) -> list[FlakyTask]:
    """Every (task, arm) whose outcomes disagree, and every task a reference arm (named in
    ``references``) did not pass every time; ordered by task, then arm."""
    found = []
    for arm, outcomes in arms.items():
        for task, values in outcomes.items():
            if not values:
                continue
            passes = sum(values)
            if arm in references and min(values) < 1.0:
                found.append(
                    FlakyTask(task, arm, passes, len(values), "reference does not always pass")
                )
            elif len(set(values)) > 1:
                found.append(FlakyTask(task, arm, passes, len(values), "repeats disagree"))
    return sorted(found, key=lambda f: (f.task, f.arm))
