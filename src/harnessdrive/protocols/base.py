"""The interface one trial protocol implements, and what it gets and gives back.

A protocol decides what happens between a trial's first fresh workspace and its result: the
single attempt (protocols/single.py) lets the agent work once and grades that; a protocol with
several rounds asks again, in fresh workspaces, and decides which round counts. It never
builds snapshots, never prices, never records: the trial core (trial/core.py) does, around
it. Protocols register through the ``harnessdrive_protocols`` hook (protocols/builtin.py) and
a task (``protocol`` in task.toml) or a variant chooses one by name.

Round 1's files go to the top of the trial folder, round N's to ``rounds/N/``: a protocol
asks :attr:`ProtocolInputs.round_paths` where, and hands each round's request those ``logs``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from harnessdrive.grading.objective import Measurement
from harnessdrive.grading.verdict import Outcome, Verdict
from harnessdrive.harnesses.base import AgentRequest, AgentRun, Harness
from harnessdrive.sandbox.process import StopToken
from harnessdrive.store.checkpoint import RoundCheckpoint
from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import Status
from harnessdrive.tasks.loading import Task
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.workspace.changes import Changes
from harnessdrive.workspace.snapshot import Snapshot

DEFAULT_PROTOCOL = "single"


class WorkspaceFactory(Protocol):
    def __call__(self, round_number: int, start: Snapshot | None = None) -> Path:
        """A fresh workspace for round ``round_number``: a copy of ``start`` (default: the
        task's base snapshot; later a checkpoint), with the task's setup run in it. Raises
        :class:`harnessdrive.errors.WorkspaceError` when setup fails there."""
        ...


ObjectiveMeasurer = Callable[[Changes, int, int], Measurement]
"""Measure the objective alone on a change: round N's evaluator call K (never the gate, never
the hidden tests). A machinery failure comes back as a measurement that says so."""

RoundGrader = Callable[[Changes, int], Verdict]
"""Grade the change of round N (its logs go to that round's folder). The grader's own failures
come back as a ``not_graded`` verdict that says why; it never raises for them."""


@dataclass(frozen=True)
class ProtocolInputs:
    task: Task
    variant: VariantSpec
    harness: Harness
    snapshot: Snapshot
    """The task's base state: round 1's workspace is a copy of it; changes are taken against it."""
    request: AgentRequest
    """Round 1's request: its workspace is ready (setup has run), its ``logs`` is round 1's."""
    new_workspace: WorkspaceFactory
    grade: RoundGrader
    round_paths: Callable[[int], TrialPaths]
    """Where round N's files go (made on first use): the trial's top for round 1, else
    ``rounds/N/``."""
    round_scratch: Callable[[int], Path]
    """A folder of round N's own for what is not kept (its prompt file, say)."""
    stop: StopToken
    """Set when the run is stopping: end now, reporting ``interrupted``."""
    checkpoint: Callable[[int, dict[str, Any]], None] = lambda rounds, state: None
    """``checkpoint(rounds, state)`` after each round: ``state`` (plain JSON) is what the
    protocol needs to continue after round ``rounds`` if the trial is killed
    (store/checkpoint.py)."""
    resumed: RoundCheckpoint | None = None
    """The checkpoint of a killed earlier attempt of this trial, by this protocol on this task."""
    measure: ObjectiveMeasurer | None = None
    """The objective alone, for the in-loop evaluator (improvement tasks)."""

    def round_request(self, number: int, *, prompt: str, workspace: Path) -> AgentRequest:
        """Round ``number``'s request: round 1's with this prompt and workspace, and this
        round's files in its own folder (its prompt kept there as ``prompt.md``)."""
        paths = self.round_paths(number)
        paths.prompt.write_text(prompt, encoding="utf-8")
        prompt_file = self.round_scratch(number) / "prompt.md"
        prompt_file.write_text(prompt, encoding="utf-8")
        return replace(
            self.request,
            prompt=prompt,
            prompt_file=prompt_file,
            workspace=workspace,
            logs=paths.root,
        )


@dataclass(frozen=True)
class RoundOutcome:
    """One round: the agent's run, the change it left, what happened to it, and its verdict."""

    agent: AgentRun
    changes: Changes
    status: Status
    verdict: Verdict
    note: str | None = None


@dataclass(frozen=True)
class ProtocolOutcome:
    """Every round in order, and the trial's own status, outcome, score and metrics."""

    rounds: tuple[RoundOutcome, ...]
    status: Status
    outcome: Outcome
    score: float | None = None
    """In [0, 1] where the protocol or its grader gives one."""
    metrics: Mapping[str, float] = field(default_factory=dict)
    carried_seconds: float = 0.0
    """Seconds of an earlier attempt whose rounds this outcome carries on (a resumed trial)."""

    @classmethod
    def of_round(cls, only: RoundOutcome) -> ProtocolOutcome:
        """A trial of one round is that round: its verdict's outcome, score and metrics."""
        verdict = only.verdict
        return cls(
            rounds=(only,),
            status=only.status,
            outcome=verdict.outcome,
            score=verdict.score,
            metrics=dict(verdict.metrics),
        )


@runtime_checkable
class TrialProtocol(Protocol):
    """What the ``harnessdrive_protocols`` hook returns items of."""

    @property
    def name(self) -> str:
        """The name a task or variant chooses it by (``single``)."""
        ...

    def run(self, inputs: ProtocolInputs) -> ProtocolOutcome:
        """Drive the rounds. An unexpected error escaping here is the trial core's to record
        as an infrastructure failure of this trial."""
        ...
