"""A mining run's journal: every checked commit and its verdict, so a stopped run continues.

Each checked commit is one JSON line in ``SUITE/journal.jsonl``, written and flushed as soon as
its verdict is known; the first line holds the settings the verdicts depend on. Run the same
command again and every commit the journal holds is taken from it instead of being checked
again (a kept one's task folder is written anew from git, which costs no test run); its logs
are the ones the earlier run left. A journal written with other settings (another test
command, setup, time limit, environment choice) is not used: mining starts over.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.checks import CandidateResult, Checker
from harnessdrive.mining.judging import REJECT_REASONS, RejectReason
from harnessdrive.mining.summary import CheckRecord
from harnessdrive.mining.taskfiles import write_task_folder
from harnessdrive.sandbox.process import StopToken

JOURNAL_FILE = "journal.jsonl"


class JournalEntry(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    commit: str
    reason: str | None
    detail: str = ""
    check: CheckRecord
    environments: list[str] = []
    seconds: float = 0.0


def fingerprint(settings: dict[str, object]) -> str:
    """What the verdicts depend on, as a short digest."""
    data = json.dumps(settings, sort_keys=True, default=str).encode()
    return hashlib.sha256(data).hexdigest()[:16]


class Journal:
    """The journal of one suite folder; thread-safe."""

    def __init__(self, folder: Path, settings: str, *, fresh: bool = False) -> None:
        self.path = folder / JOURNAL_FILE
        self.settings = settings
        self.entries: dict[str, JournalEntry] = {}
        self._guard = threading.Lock()
        self.resumed = False
        """True when an earlier run's journal, with the same settings, is continued."""
        if not fresh:
            self._read()
        if not self.resumed:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            header = {"journal": 1, "settings": settings}
            self.path.write_text(json.dumps(header) + "\n", encoding="utf-8")

    def _read(self) -> None:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return
        try:
            header = json.loads(lines[0]) if lines else {}
        except ValueError:
            return
        if not isinstance(header, dict) or header.get("settings") != self.settings:
            return
        self.resumed = True
        for line in lines[1:]:
            try:
                entry = JournalEntry.model_validate_json(line)
            except ValidationError:
                continue  # a line cut short when the run was killed
            self.entries[entry.id] = entry

    def get(self, candidate_id: str) -> JournalEntry | None:
        return self.entries.get(candidate_id)

    def record(self, result: CandidateResult) -> None:
        entry = JournalEntry(
            id=result.candidate.id,
            commit=result.candidate.commit,
            reason=result.reason,
            detail=result.detail,
            check=result.check,
            environments=list(result.environments),
            seconds=result.seconds,
        )
        with self._guard:
            self.entries[entry.id] = entry
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(entry.model_dump_json() + "\n")
                handle.flush()


@dataclass(frozen=True)
class JournaledChecker:
    """A :class:`Checker` that takes the journal's verdicts and writes down its own."""

    checker: Checker
    journal: Journal

    @property
    def stop(self) -> StopToken:
        return self.checker.stop

    def halt(self) -> None:
        self.checker.halt()

    def check(self, candidate: Candidate) -> CandidateResult:
        entry = self.journal.get(candidate.id)
        reason = _reason(entry.reason) if entry is not None else None
        if entry is None or entry.commit != candidate.commit or reason == "unknown":
            result = self.checker.check(candidate)
            self.journal.record(result)
            return result
        folder = None
        if entry.reason is None:
            folder = self.checker.staging / candidate.id
            notes = self.checker.notes.get(candidate.id)
            repo, settings = self.checker.repo, self.checker.settings
            write_task_folder(folder, repo, candidate, settings, notes=notes)
        result = CandidateResult(
            candidate,
            None if reason == "kept" else reason,
            entry.check,
            folder,
            tuple(entry.environments),
            entry.seconds,
            entry.detail,
        )
        return replace(result, resumed=True)


def _reason(written: str | None) -> RejectReason | Literal["kept", "unknown"]:
    if written is None:
        return "kept"
    for reason in REJECT_REASONS:
        if reason == written:
            return reason
    return "unknown"  # a reason this version does not have: check the commit again
