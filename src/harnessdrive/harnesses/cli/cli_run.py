"""What a CLI adapter works with during one run: the run, the command, what it read back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harnessdrive.harnesses.base import AgentRequest
from harnessdrive.harnesses.cli.endpoint import Endpoint
from harnessdrive.harnesses.cli.options import CliOptions
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Transcript


@dataclass(frozen=True)
class EarlierLog:
    """The part of a resumed session's log that earlier runs wrote."""

    lines: int = 0
    """Lines of the session log already there."""
    files: frozenset[Path] = frozenset()
    """Side logs (subagents) already there."""


@dataclass(frozen=True)
class CliRun:
    """One trial's run of one CLI: everything the CLI module needs to build and read it."""

    request: AgentRequest
    binary: Path
    version: str | None
    endpoint: Endpoint | None
    prompt_file: Path
    """The prompt with the non-interactive note, outside the workspace."""
    session_id: str
    """A fresh id the adapter may hand to the CLI (as a UUID)."""
    options: CliOptions
    """The variant's options, as the adapter's options model."""
    resumed: EarlierLog | None = None
    """Set when this run continues the session ``session_id`` (``AgentRequest.resume_session``):
    what its log held before, which this run's transcript leaves out."""

    @property
    def home(self) -> Path:
        return self.request.home

    @property
    def workspace(self) -> Path:
        return self.request.workspace

    @property
    def variant(self) -> VariantSpec:
        return self.request.variant

    @property
    def full_permissions(self) -> bool:
        return self.options.permissions == "full"


@dataclass(frozen=True)
class Launch:
    """The command to run and what it needs besides the allowlisted environment."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    """Set outright: the CLI's private config folders, base URLs, keys of an endpoint."""
    passthrough: tuple[str, ...] = ()
    """Variables copied from the caller's environment (the CLI's API key)."""
    stdin: Path | None = None
    """The prompt file when the CLI reads its prompt on stdin; otherwise /dev/null."""


@dataclass(frozen=True)
class Collected:
    """What the CLI module read back: the transcript, and the session log it is bound to."""

    transcript: Transcript
    session_log: Path | None = None
    extra_logs: tuple[Path, ...] = ()
