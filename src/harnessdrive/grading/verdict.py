"""What the grader concluded, as stored in ``result.json``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Outcome = Literal["pass", "fail", "tampered", "not_graded"]
CountSource = Literal["junit", "exit_code"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Finding(_Model):
    """One sign that the agent tried to pass without doing the work."""

    code: str
    """Stable identifier, e.g. ``protected-path``; documented in docs/security.md."""
    path: str | None = None
    detail: str = ""


class GradingRun(_Model):
    """One run of a grading command in the grading copy."""

    command: str
    exit_code: int | None
    timed_out: bool
    seconds: float
    passed: int
    total: int
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    source: CountSource
    """Where ``passed``/``total`` come from: the junit report, or only the exit code."""
    note: str | None = None

    @property
    def succeeded(self) -> bool:
        return (
            self.exit_code == 0
            and not self.timed_out
            and self.total > 0
            and self.failed == 0
            and self.errors == 0
        )


class SetupRun(_Model):
    commands: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    seconds: float


class Verdict(_Model):
    outcome: Outcome
    visible: GradingRun | None = None
    """The visible command, run before the hidden files were injected."""
    hidden: GradingRun | None = None
    """The test command, run with the hidden files; it decides pass or fail."""
    findings: tuple[Finding, ...] = ()
    excluded_paths: tuple[str, ...] = ()
    """Changed paths not carried into the grading copy (protected, restored, hidden targets)."""
    setup: SetupRun | None = None
    error: str | None = None
    """Why the trial could not be graded, when ``outcome`` is ``not_graded``."""
    seconds: float = 0.0
