"""The reference's per-test outcomes, recorded in the task folder beside the hidden files.

``check`` (grading the reference solution) and mining (grading a kept commit's state after the
fix) write what each hidden test did there. Grading then compares an agent's run with it
(grading/earned.py): a hidden test the reference passed must pass, one the reference skipped or
did not run stays neutral, whatever made it skip (a conftest marker, a missing optional
dependency). The record names a digest of the hidden files it was made against; once they
change it is stale and ignored, and the rule of what the hidden file declares applies again.
The task folder never reaches the agent's workspace, so the agent can neither read nor write it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from harnessdrive.grading.junit import JunitCase
from harnessdrive.tasks.loading import Task

RECORD_FILE = "reference-outcomes.json"
_RECORD_LIMIT = 20_000_000


class ReferenceOutcomes(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    hidden_digest: str
    """sha256 over the hidden files (target and content) the outcomes were recorded against."""
    outcomes: dict[str, str]
    """``target::test name`` → ``passed``, ``skipped``, ``failed`` or ``missing``."""


def key(target: str, name: str) -> str:
    return f"{target}::{name}"


def hidden_digest(task: Task) -> str:
    digest = hashlib.sha256()
    for item in sorted(task.hidden, key=lambda i: i.target):
        data = item.source.read_bytes()
        digest.update(f"{item.target}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def outcome_of(cases: Sequence[JunitCase]) -> str:
    """One hidden test's outcome from its report cases (parametrized cases, subtests)."""
    if not cases:
        return "missing"
    if any(c.outcome in ("failed", "error") for c in cases):
        return "failed"
    if any(c.outcome == "skipped" for c in cases):
        return "skipped"
    return "passed"


def fresh(task: Task) -> dict[str, str] | None:
    """The task's record when it matches the hidden files as they are now, else None."""
    path = task.folder / RECORD_FILE
    try:
        if not path.is_file() or path.stat().st_size > _RECORD_LIMIT:
            return None
        record = ReferenceOutcomes.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None
    if record.hidden_digest != hidden_digest(task):
        return None
    return dict(record.outcomes)


def write(task: Task, outcomes: Mapping[str, str]) -> Path:
    """Record ``outcomes`` (the reference's) for the task's hidden files as they are now."""
    record = ReferenceOutcomes(hidden_digest=hidden_digest(task), outcomes=dict(outcomes))
    path = task.folder / RECORD_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def recorded_from(runs: Iterable[Mapping[str, str] | None]) -> dict[str, str] | None:
    """The per-test outcomes of the grading runs that carry them, merged; None when none do."""
    merged: dict[str, str] | None = None
    for outcomes in runs:
        if outcomes is not None:
            merged = {**(merged or {}), **outcomes}
    return merged
