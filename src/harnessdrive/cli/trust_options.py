"""The options of the commands that score a results folder afterwards (report, compare) on
which tasks count: by default not those the audit marked untrusted or invalid."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harnessdrive.audit.trust_record import suite_trust
from harnessdrive.store.trust import TaskTrust
from harnessdrive.tasks.loading import load_suite

AllTasksOption = Annotated[
    bool,
    typer.Option(
        "--all-tasks",
        help="Count tasks the audit (check --audit) marked untrusted or invalid; by default "
        "they are left out and the report says so.",
    ),
]
AuditedSuiteOption = Annotated[
    Path | None,
    typer.Option(
        "--suite",
        metavar="SUITE",
        help="Count by the suite's audits now (after a re-audit, say), not those the run "
        "recorded; a task changed since the run keeps its recorded one.",
    ),
]


def audits_now(suite: Path | None) -> dict[str, TaskTrust] | None:
    """Each task's trust by the audits beside the suite's tasks now; None without ``--suite``."""
    return None if suite is None else suite_trust(load_suite(suite).tasks)
