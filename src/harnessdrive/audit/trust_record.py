"""A task's audit (``audit.json`` beside it) as the trust a run records for it
(store/trust.py): whether its results count, and why not."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import UTC, datetime

from harnessdrive.audit.record import AUDIT_FILE
from harnessdrive.store.trust import TaskTrust, TrustStatus
from harnessdrive.tasks.loading import Task


def task_trust(task: Task) -> TaskTrust:
    """What the audit beside ``task`` says of this version of it."""
    path = task.folder / AUDIT_FILE
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
        written = path.stat().st_mtime
    except (OSError, ValueError):
        return TaskTrust(task=task.id, status="unaudited", fingerprint=task.fingerprint)
    if not isinstance(data, dict):
        return TaskTrust(task=task.id, status="unaudited", fingerprint=task.fingerprint)
    audited_fingerprint = data.get("fingerprint")
    audited_fingerprint = audited_fingerprint if isinstance(audited_fingerprint, str) else ""
    exploits = _names(
        item.get("exploit")
        for item in _list(data.get("exploits"))
        if isinstance(item, dict) and item.get("succeeded") is True
    )
    problems = _names(_list(data.get("problems")))
    # An audit of another version of the task (an older fingerprint) does not speak for it.
    current = audited_fingerprint in ("", task.fingerprint)
    return TaskTrust(
        task=task.id,
        status=_status(data.get("trusted"), exploits, problems) if current else "unaudited",
        exploits=exploits if current else (),
        problems=problems if current else (),
        fingerprint=task.fingerprint,
        audited_fingerprint=audited_fingerprint,
        audited=datetime.fromtimestamp(written, UTC).isoformat(timespec="seconds")[:-6] + "Z",
        audit_sha256=hashlib.sha256(raw).hexdigest()[:16],
    )


def suite_trust(tasks: Iterable[Task]) -> dict[str, TaskTrust]:
    return {task.id: task_trust(task) for task in tasks}


def _status(trusted: object, exploits: tuple[str, ...], problems: tuple[str, ...]) -> TrustStatus:
    if not isinstance(trusted, bool):
        return "unaudited"  # no exploit applied to the task, nor a problem found
    if trusted:
        return "trusted"
    # A task that cannot be solved fairly is invalid whatever else broke it.
    return "invalid" if problems else "untrusted"


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _names(values: Iterable[object]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(v) for v in values if isinstance(v, str) and v))
