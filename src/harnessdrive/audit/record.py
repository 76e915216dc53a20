"""What the audit found on a task, and its record beside the task (``audit.json``) that later
commands (the scoreboard, decisions) read to leave untrusted tasks out."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

AUDIT_FILE = "audit.json"


@dataclass(frozen=True)
class ExploitOutcome:
    exploit: str
    outcome: str
    """The verdict the exploit's change got."""
    succeeded: bool
    fix: str = ""
    detail: str = ""
    score: float | None = None
    """The verdict's score, where the grader kind gives one."""
    earned: float | None = None
    """The most a change that solves nothing may score on the task (where it has scores)."""

    @property
    def got(self) -> str:
        """What the exploit got, in words: a pass, a score above what it earns, or a verdict
        left out of the counts."""
        if self.outcome == "pass":
            return "a pass"
        if self.outcome == "not_graded":
            return "a 'not counted'"
        if self.outcome == "moved":
            return "the objective moved past its margin without improving anything"
        if self.score is not None and self.earned is not None and self.score > self.earned:
            return f"a score of {self.score:.0%} where nothing earns more than {self.earned:.0%}"
        return f"{self.outcome}"


@dataclass
class TaskAudit:
    task: str
    fingerprint: str = ""
    """The task's fingerprint when audited: a changed task needs a new audit."""
    exploits: list[ExploitOutcome] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Validity problems found without an exploit (the answer quoted in the prompt, say)."""

    @property
    def broken_by(self) -> list[ExploitOutcome]:
        return [item for item in self.exploits if item.succeeded]

    @property
    def audited(self) -> bool:
        """Whether any exploit applied to the task (none does to some grader kinds yet)."""
        return bool(self.exploits)

    @property
    def trusted(self) -> bool:
        return not self.broken_by and not self.problems

    @property
    def trust_word(self) -> str:
        if not self.trusted:
            return "untrusted"
        return "trusted" if self.audited else "not audited"

    def as_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "fingerprint": self.fingerprint,
            "trusted": self.trusted if self.audited or self.problems else None,
            "exploits": [asdict(item) for item in self.exploits],
            "problems": self.problems,
        }


def write_audit(folder: Path, audit: TaskAudit) -> None:
    (folder / AUDIT_FILE).write_text(json.dumps(audit.as_json(), indent=2) + "\n")


def read_trust(folder: Path, fingerprint: str | None = None) -> bool | None:
    """Whether the task in ``folder`` was audited trusted; None when it has no audit, one no
    exploit applied to, or one of another version of the task (when ``fingerprint`` is given)."""
    try:
        data = json.loads((folder / AUDIT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("trusted"), bool):
        return None
    if fingerprint is not None and data.get("fingerprint") not in ("", fingerprint):
        return None
    return bool(data["trusted"])


def audits_json(audits: list[TaskAudit]) -> str:
    return json.dumps(
        {
            "trusted": all(item.trusted for item in audits),
            "tasks": [item.as_json() for item in audits],
        },
        indent=2,
    )
