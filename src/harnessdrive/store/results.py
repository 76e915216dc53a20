"""``result.json``: the record of one trial, the source of truth of every report.

Documented field by field in docs/results.md. ``schema`` changes whenever a field changes meaning.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from harnessdrive.grading.verdict import Outcome, StreamKept, Verdict
from harnessdrive.store.cost import Cost, CostSource
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Usage
from harnessdrive.workspace.names import NameText, model_json

RESULT_SCHEMA = "harnessdrive-result-2"
"""2 added the suite's identity and version and harnessdrive's version; files of 1 still load."""

__all__ = [
    "RESULT_SCHEMA",
    "AgentSummary",
    "Cost",
    "CostSource",
    "DiffStats",
    "Status",
    "Timing",
    "TrialResult",
]

Status = Literal["completed", "timeout", "crashed", "could_not_run", "interrupted", "skipped"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Timing(_Model):
    setup: float = 0.0
    agent: float = 0.0
    grading: float = 0.0
    total: float = 0.0
    overhead: float = 0.0
    """Seconds spent outside the setup, agent and test commands: our own machinery."""


class DiffStats(_Model):
    files_changed: int = 0
    lines_added: int = 0
    lines_deleted: int = 0
    paths: tuple[NameText, ...] = ()
    """Changed file names; raw bytes that are not UTF-8 are escaped in JSON (docs/results.md)."""
    patch_bytes: int | None = None
    """Size of the whole patch; ``diff.patch`` keeps its first part when this is larger."""

    @property
    def lines_changed(self) -> int:
        return self.lines_added + self.lines_deleted


class AgentSummary(_Model):
    exit_code: int | None = None
    error: str | None = None
    hint: str | None = None
    model: str | None = None
    turns: int | None = None
    tool_calls: int = 0
    calls: int = 0
    usage: Usage = Usage()
    permission_denials: int = 0
    stdout: StreamKept | None = None
    """How much the agent printed to stdout, and whether ``agent.stdout`` keeps only part."""
    stderr: StreamKept | None = None


class TrialResult(_Model):
    schema_: str = Field(default=RESULT_SCHEMA, alias="schema")
    trial_id: str
    run_id: str | None = None
    attempt: int = 1
    suite: str
    task: str
    task_title: str = ""
    task_fingerprint: str
    variant: VariantSpec
    variant_label: str
    harness: str
    harness_version: str | None = None
    repetition: int
    status: Status
    outcome: Outcome
    started: str
    finished: str
    seconds: Timing = Timing()
    agent: AgentSummary = AgentSummary()
    diff: DiffStats = DiffStats()
    grading: Verdict | None = None
    cost: Cost = Cost()
    sandbox: str = "none"
    base_commit: str | None = None
    base_source: str | None = None
    workspace: str | None = None
    """The agent's workspace, kept only with ``--keep``."""
    note: str | None = None
    suite_id: str | None = None
    """The suite's identity, ``<suite>@<hash of its folder>``; None in files before schema 2."""
    suite_folder: str | None = None
    suite_version: str | None = None
    """A hash of the suite's spec and its tasks' fingerprints when the trial was planned."""
    harnessdrive_version: str | None = None

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def to_json(self) -> str:
        # A raw byte of a file name in a free-text field (an error message, say) is written the
        # way names are, so the record is never lost (docs/results.md).
        return model_json(self, by_alias=True)
