"""Each task's trust as a run found it, recorded in the run's manifest (``trust``), so the
commands that read a results folder later (report, compare, the page) leave out the same tasks
the run's scoreboard left out, without the suite's folders at hand.

The record is made from the task's audit (``audit.json`` beside it, written by
``check --audit``) when the run starts. A manifest written before runs recorded trust has no
``trust`` at all: its tasks are counted and said to be not audited.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from harnessdrive.store.results import TrialResult

TrustStatus = Literal["trusted", "untrusted", "invalid", "unaudited"]
"""``untrusted``: an exploit got a verdict it had not earned; ``invalid``: the task cannot be
solved and graded fairly (the triage's problems); ``unaudited``: no audit speaks for this
version of the task."""

LEFT_OUT: frozenset[str] = frozenset({"untrusted", "invalid"})
"""The statuses whose tasks the scoreboard and the decisions leave out by default."""


class TaskTrust(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str
    status: TrustStatus
    exploits: tuple[str, ...] = ()
    """The exploits that broke the task (for ``untrusted``)."""
    problems: tuple[str, ...] = ()
    """The validity problems the audit found (for ``invalid``)."""
    fingerprint: str = ""
    """The task's fingerprint when the run started."""
    audited_fingerprint: str = ""
    """The fingerprint of the task the audit was made on; another than ``fingerprint``: the
    audit was of an earlier version of the task and does not speak for this one."""
    audited: str | None = None
    """When the audit record was written (UTC), None without one."""
    audit_sha256: str = ""
    """A hash of the audit record as read, so a later re-audit can be told apart."""

    @property
    def left_out(self) -> bool:
        return self.status in LEFT_OUT

    def why(self) -> str:
        """The reason in a few words: an invalid task's problems, an untrusted one's exploits."""
        found = self.problems if self.status == "invalid" else self.exploits
        return f"{self.status}: {', '.join(found)}" if found else self.status


def recorded_trust(manifest: Mapping[str, object]) -> dict[str, TaskTrust] | None:
    """The trust a run manifest recorded, by task; None for a run recorded before runs did.
    An entry that does not read as a trust record counts as no audit of its task."""
    entries = manifest.get("trust")
    if not isinstance(entries, dict):
        return None
    found: dict[str, TaskTrust] = {}
    for task, entry in entries.items():
        try:
            found[str(task)] = TaskTrust.model_validate(entry)
        except ValidationError:
            found[str(task)] = TaskTrust(task=str(task), status="unaudited")
    return found


def trial_trust(recorded: Mapping[str, TaskTrust] | None, trial: TrialResult) -> TaskTrust | None:
    """The trust ``recorded`` (a run's, by task) gives one of the run's trials; None when the
    run recorded none."""
    if recorded is None:
        return None  # a run from before runs recorded trust
    found = recorded.get(trial.task)
    if found is None or (found.fingerprint and found.fingerprint != trial.task_fingerprint):
        # A trial the run resumed from another version of the task: no record speaks for it.
        return TaskTrust(task=trial.task, status="unaudited")
    return found
