"""What the grader concluded, as stored in ``result.json``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from harnessdrive.grading.claims import Claim
from harnessdrive.sandbox.output import StreamRecord
from harnessdrive.workspace.names import NameText

Outcome = Literal["pass", "fail", "tampered", "not_graded"]
CountSource = Literal["junit", "exit_code"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Finding(_Model):
    """One sign that the agent tried to pass without doing the work, or strayed."""

    code: str
    """Stable identifier, e.g. ``protected-path``; documented in docs/security.md."""
    path: NameText | None = None
    """A file name: raw bytes that are not UTF-8 are escaped in JSON (docs/results.md)."""
    detail: NameText = ""
    severity: Literal["tamper", "report"] = "tamper"
    """``tamper`` makes the outcome ``tampered``; ``report`` is listed and the tests decide
    (an ``out-of-scope`` change, unless the task says it tampers). Results stored before this
    field existed hold only tampering findings, so it defaults to ``tamper``."""

    @property
    def tampers(self) -> bool:
        return self.severity == "tamper"


class StreamKept(_Model):
    """How much a process printed to one log, and how much of it the log keeps."""

    bytes_written: int
    bytes_kept: int
    cut: bool
    """True when the middle was left out: the log holds the head, a note, and the tail."""

    @classmethod
    def of(cls, record: StreamRecord | None) -> StreamKept | None:
        if record is None:
            return None
        return cls(bytes_written=record.written, bytes_kept=record.kept, cut=record.cut)


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
    canaries: int = 0
    """Planted tests of known outcome that ran beside these; they are not in the counts."""
    twins: int = 0
    """Report cases of the twin of a hidden test (the test with one expectation perturbed, run
    in a copy of its own after this run passed; it must fail); they are not in the counts."""
    expected_exit: int = 0
    """The exit status of a run whose real tests all passed (1 when planted failures ran)."""
    hidden_outcomes: dict[str, str] | None = None
    """Each hidden test's outcome (``target::name`` → passed, skipped, failed, missing), when
    the report was judged test by test; ``check`` and mining record the reference's."""
    output: StreamKept | None = None
    """What the command printed to its log (stdout and stderr together)."""
    started: float | None = None
    """Seconds after grading began that the command started (runs of one grading may overlap);
    None in results stored before it was recorded."""

    @property
    def succeeded(self) -> bool:
        # Nothing failed is not yet passed: a report of skipped tests alone passes nothing.
        return (
            self.exit_code == self.expected_exit
            and not self.timed_out
            and self.total > 0
            and self.passed > 0
            and self.failed == 0
            and self.errors == 0
        )


class SetupRun(_Model):
    commands: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    seconds: float


class GraderRef(_Model):
    """Which grader produced a verdict, and with what arguments."""

    kind: str
    """The grader kind: the task's ``[grade] kind`` (``tests``, or a plugin's)."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The kind's own ``[grade]`` fields as the task gave them, defaults filled in (for
    ``tests``: ``command``, ``visible_command``, ``junit``); the fields every kind shares
    (hidden files, protected and restored paths, timeout, scope) are left out."""


class Verdict(_Model):
    outcome: Outcome
    visible: GradingRun | None = None
    """The visible command, run in a grading copy of its own that never holds the hidden
    files; reported apart, it never decides."""
    hidden: GradingRun | None = None
    """The test command, run with the hidden files; it decides pass or fail."""
    findings: tuple[Finding, ...] = ()
    left_out: tuple[Finding, ...] = ()
    """Paths of the workspace that are not part of the change (a nested repository, an
    oversized, special or unreadable file). Unlike ``findings`` they never make it tampered."""
    excluded_paths: tuple[NameText, ...] = ()
    """Changed paths not carried into the grading copy (protected, restored, hidden targets)."""
    setup: SetupRun | None = None
    error: str | None = None
    """Why the trial could not be graded, when ``outcome`` is ``not_graded``."""
    seconds: float = 0.0
    grader: GraderRef | None = None
    """The grader kind and its arguments; None where no grader gave the verdict (the agent
    could not run, the trial was interrupted, grading failed) and in results stored before it
    was recorded."""
    score: float | None = Field(default=None, ge=0, le=1)
    """A score in [0, 1] where the grader kind gives one (``tests`` gives none)."""
    metrics: dict[str, float] = Field(default_factory=dict)
    """Named numbers the grader kind measured beside the outcome (``tests`` gives none)."""
    details: dict[str, JsonValue] = Field(default_factory=dict)
    """The grader kind's own data beside the outcome, as plain JSON: what only that kind knows
    how to read (the ``differential`` kind's shrunk counterexamples under ``counterexamples``).
    Empty for kinds that give none."""
    claims: tuple[Claim, ...] = ()
    """Checkable claims of the agent's final message, each checked against this verdict."""

    @model_validator(mode="before")
    @classmethod
    def _counterexamples_before_details(cls, data: Any) -> Any:
        """Results stored before ``details`` kept the differential kind's counterexamples at
        the top of the verdict."""
        if not isinstance(data, dict) or "counterexamples" not in data:
            return data
        data = dict(data)
        examples = data.pop("counterexamples")
        if examples:
            data["details"] = {**data.get("details", {}), "counterexamples": examples}
        return data

    @property
    def command_seconds(self) -> float:
        """Wall time taken by the grading copy's setup and the test runs, time in which runs
        overlapped counted once."""
        runs = [run for run in (self.visible, self.hidden) if run is not None]
        setup = self.setup.seconds if self.setup else 0.0
        spans = sorted(
            (run.started, run.started + run.seconds) for run in runs if run.started is not None
        )
        if len(spans) < len(runs):  # stored before start times were: the runs were in turn
            return setup + sum(run.seconds for run in runs)
        covered, reach = 0.0, float("-inf")
        for begin, end in spans:
            covered += max(end - max(begin, reach), 0.0)
            reach = max(reach, end)
        return setup + covered
