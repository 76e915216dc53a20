"""One task of two arms compared task by task: each arm's mean over its repeats of the task,
so a task run five times weighs as much as a task run once."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PairedTask:
    task: str
    first: float
    """The first arm's mean over its repeats of this task."""
    second: float
    first_trials: int
    second_trials: int

    @property
    def difference(self) -> float:
        return self.first - self.second
