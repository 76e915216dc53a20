"""Which tasks' results count: by default only tasks whose audit found them trusted and valid.

A task with no audit record counts (nothing is known against it); one whose record is of
another version of the task counts too, until it is audited again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from harnessdrive.audit.record import read_trust
from harnessdrive.errors import UserError
from harnessdrive.tasks.loading import Suite, Task


def untrusted_tasks(tasks: Sequence[Task]) -> list[str]:
    """Ids of the tasks whose current audit record says they cannot be trusted."""
    return [task.id for task in tasks if read_trust(task.folder, task.fingerprint) is False]


def counted_suite(suite: Suite) -> tuple[Suite, list[str]]:
    """``suite`` without its untrusted tasks, and their ids: what a run that decides between
    arms as it goes compares on (a decision counts only tasks the scoreboard counts)."""
    left_out = untrusted_tasks(suite.tasks)
    if not left_out:
        return suite, []
    kept = tuple(task for task in suite.tasks if task.id not in left_out)
    if not kept:
        raise UserError(
            f"the audit marked every task of {suite.name} untrusted ({', '.join(left_out)}); "
            "fix them, audit again (check --audit), or count them with --all-tasks"
        )
    return dataclasses.replace(suite, tasks=kept), left_out
