"""What a task's processes see besides their own copy and the system: one answer for all.

Mining validation, ``check`` and ``run`` (the agent, setup and both grading commands) take
the task's view from :func:`task_view`, so a task that mining kept is checked and run under
exactly the conditions it was validated under. The view is read-only: shared folders the task
names (a mined suite's test environments) and the interpreter ``{python}`` stands for, which the
sandbox already shows with its packages.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harnessdrive.tasks.loading import Task


@dataclass(frozen=True)
class TaskView:
    python: str
    """The interpreter ``{python}`` names in setup and test commands."""
    shared: tuple[Path, ...] = ()
    """Folders outside the copy the task's processes read but never change."""

    @property
    def readonly(self) -> tuple[Path, ...]:
        """Paths a sandbox shows read-only, on top of the copy and the system."""
        return self.shared

    def values(self, copy: Path) -> dict[str, str]:
        """Placeholder values for a command run in ``copy``."""
        return {"python": self.python, "workspace": str(copy)}


def task_view(task: Task, python: str) -> TaskView:
    return TaskView(python=python, shared=task.shared)
