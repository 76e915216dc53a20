"""Which tasks' results count: by default only tasks whose audit found them trusted and valid.

A task with no audit record counts (nothing is known against it); one whose record is of
another version of the task counts too, until it is audited again.
"""

from __future__ import annotations

from collections.abc import Sequence

from harnessdrive.audit.record import read_trust
from harnessdrive.tasks.loading import Task


def untrusted_tasks(tasks: Sequence[Task]) -> list[str]:
    """Ids of the tasks whose current audit record says they cannot be trusted."""
    return [task.id for task in tasks if read_trust(task.folder, task.fingerprint) is False]
