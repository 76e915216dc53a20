"""The grader-kind seam: what a kind receives, what it returns, and how it is found.

Grading is a pipeline of two steps. The first is the same for every kind
(:mod:`harnessdrive.grading.copying`): the tamper and scope checks, splitting the change (what is
protected, restored or a hidden target stays out), a fresh copy of the base state plus the rest
of the change, the task's setup, and the hidden files injected. The second is the kind's own: its
checks run on that :class:`GradingCopy` and give a :class:`~harnessdrive.grading.verdict.Verdict`.
The pipeline then adds what the first step found, so a kind never has to: tampering findings
make the outcome ``tampered`` whatever the kind said, and the verdict records the kind and its
arguments (``grader``).

Writing a kind (in a plugin, or in harnessdrive)::

    class ObjectiveSpec(GradeSpec):          # the [grade] table: common fields + its own
        kind: Literal["objective"] = "objective"
        command: str

    class ObjectiveKind:
        name = "objective"                   # the [grade] kind value
        spec_model = ObjectiveSpec

        def grade(self, copy: GradingCopy, spec: ObjectiveSpec) -> Verdict:
            run = copy.run("objective", spec.command, timeout=spec.timeout)
            value = ...                      # read from its log in copy.logs, say
            return Verdict(outcome="pass" if run.succeeded else "fail", score=..., metrics={...})

    @hookimpl
    def harnessdrive_grader_kinds() -> list[GraderKind[Any]]:
        return [ObjectiveKind()]

The module holding the hook implementation is an entry point of the ``harnessdrive`` group
(``[project.entry-points.harnessdrive]`` in the plugin's ``pyproject.toml``).

Rules a kind keeps: run the agent's code only through the copy's sandbox (:meth:`GradingCopy.run`
or ``copy.setup.sandbox`` with ``copy.isolation``), so it sees the copy and nothing of the
trial; keep every report it reads outside the copy (in ``copy.outputs``); raise
:class:`~harnessdrive.errors.GradingError` when it cannot evaluate (never pass instead); and
return ``pass`` or ``fail`` (``not_graded`` only with an ``error``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from harnessdrive.errors import GradingError
from harnessdrive.grading.commands import run_command
from harnessdrive.grading.context import GradingSetup
from harnessdrive.grading.verdict import Finding, GradingRun, SetupRun, Verdict
from harnessdrive.plugins.registry import registrations
from harnessdrive.sandbox.runner import Isolation, Sandbox
from harnessdrive.tasks.grade_kinds import GRADER_KINDS_HOOK, grade_tables
from harnessdrive.tasks.loading import Task
from harnessdrive.tasks.models import GradeSpec
from harnessdrive.workspace.changes import FileChange

__all__ = [
    "AgentRunHook",
    "GradeSpec",
    "GraderKind",
    "GradingCopy",
    "GradingSetup",
    "MeasuringKind",
    "RunWatch",
    "Verdict",
    "grader_kind",
    "grader_kinds",
]

SpecT_contra = TypeVar("SpecT_contra", bound=GradeSpec, contravariant=True)


@dataclass(frozen=True)
class GradingCopy:
    """A built grading copy: base state + the change (minus what stays out) + setup + hidden
    files. The agent never touched it; it is removed after grading unless asked to keep it."""

    setup: GradingSetup
    """The task, its base snapshot, the sandbox, the interpreter, the stop token, the logs."""
    root: Path
    """The copy itself; commands run here."""
    scratch: Path
    """A folder of this copy's own, beside it (not inside): HOME, tmp, outputs live there."""
    outputs: Path
    """Where commands write reports (junit): writable to them, outside the copy."""
    env: Mapping[str, str]
    """The base environment of a command in this copy (private HOME and tmp)."""
    isolation: Isolation
    """What a command in this copy may see: the copy, its HOME, tmp and outputs writable; the
    task's view and the hidden files read-only; no network."""
    included: tuple[FileChange, ...]
    """The part of the agent's change carried into the copy."""
    hidden: Mapping[str, Path]
    """The hidden files injected, by target (empty in a copy made with ``hidden=False``)."""
    findings: tuple[Finding, ...]
    """What the copy step found (tampering, scope); the pipeline adds them to the verdict."""
    setup_run: SetupRun | None
    """The task's setup in this copy; None when the task has none."""
    began: float
    """The clock reading (``harnessdrive.sandbox.clock.now``) when grading began; runs record
    their start as seconds after it."""
    fresh: Callable[[str], AbstractContextManager[GradingCopy | None]]
    """``fresh(label)``: another copy of the base plus the same change, WITHOUT the hidden
    files, in a scratch folder of its own (``<scratch>/<label>``), with its own HOME and tmp, and
    setup logged to ``grade-setup-<label>.log``. Yields None when its setup fails after the
    agent changed a dependency file. Removed when the block ends. ``label``: lower-case
    letters, digits, ``-`` and ``_``, not starting with ``grading-`` (the deciding copy's)."""
    twin: Callable[[], AbstractContextManager[GradingCopy | None]] | None = None
    """``twin()``: another copy built as this one was, hidden files and all, in a folder of the
    same shape beside it, for the run of a twin (grading/twin_run.py); None in a further copy.
    Yields None when its setup fails. Removed when the block ends."""

    @property
    def task(self) -> Task:
        return self.setup.task

    @property
    def values(self) -> dict[str, str]:
        """Placeholder values for a command run in this copy (``{python}``, ``{workspace}``)."""
        return {"python": self.setup.python, "workspace": str(self.root)}

    @property
    def logs(self) -> Path:
        """Where logs go (the trial's folder); outside the copy."""
        return self.setup.logs

    def run(self, label: str, command: str, *, timeout: float, junit: bool = False) -> GradingRun:
        """Run ``command`` (placeholders ``{python}``, ``{workspace}``, ``{junit}``) in this
        copy's sandbox, logged to ``grade-<label>.log``. Counts come from the exit status, or
        with ``junit`` from the report its runner writes outside the copy."""
        run, _ = run_command(self, command, label, timeout=timeout, junit=junit)
        return run


@runtime_checkable
class GraderKind(Protocol[SpecT_contra]):
    """One grader kind, registered through the ``harnessdrive_grader_kinds`` hook."""

    @property
    def name(self) -> str:
        """The ``[grade] kind`` value that selects this kind, e.g. ``tests``."""
        ...

    @property
    def spec_model(self) -> type[GradeSpec]:
        """Its ``[grade]`` table: a :class:`GradeSpec` subclass (the common fields, plus its
        own) whose ``kind`` field is ``Literal[name]`` with ``name`` as default. Unknown keys
        are errors (``extra="forbid"``, inherited); its fields appear in
        ``harnessdrive schema task``, each described by the docstring under it."""
        ...

    def grade(self, copy: GradingCopy, spec: SpecT_contra) -> Verdict:
        """Run the kind's checks on the built copy; ``spec`` is an instance of ``spec_model``.

        Return the verdict of its checks (outcome, and optionally score, metrics, runs and
        findings of its own). Raise :class:`~harnessdrive.errors.GradingError` when it cannot
        evaluate."""
        ...


@dataclass
class RunWatch:
    """What a kind's hook around the agent's run gives the run, and what it saw of it."""

    env: dict[str, str] = field(default_factory=dict)
    """Variables the agent's run is given (a service's address, say)."""
    problem: str | None = None
    """Set when the machinery disturbed the run (a service died): the round is recorded
    invalid and never scored."""

    def disturbed(self, problem: str) -> None:
        """Record ``problem``, unless an earlier one is recorded already."""
        if self.problem is None:
            self.problem = problem


@runtime_checkable
class AgentRunHook(Protocol):
    """What a grader kind implements, beside :class:`GraderKind`, to act during the agent's
    run of every round of its tasks (the ``differential`` kind serves its oracle there)."""

    def around_agent_run(self, task: Task, sandbox: Sandbox) -> AbstractContextManager[RunWatch]:
        """A context entered just before the agent's run and left when it ends. The watch's
        ``env`` is added to the run's environment; setting its ``problem`` makes the round
        invalid. ``sandbox`` is the run's, for a process the kind starts for the agent."""
        ...


@runtime_checkable
class MeasuringKind(Protocol):
    """What a grader kind implements, beside :class:`GraderKind`, when its verdicts carry a
    measured objective (the ``improve`` kind): the improve protocol reads them through it, never
    through the kind's name or how the verdict stores them."""

    def samples(self, verdict: Verdict) -> tuple[float, ...]:
        """The objective's samples in ``verdict``, in order; none when it was not measured."""
        ...

    def workload_result(self, verdict: Verdict) -> float | None:
        """The objective runner's digest of the workload's result, where it reported one: a
        state whose workload answers otherwise than the untouched one's did other work."""
        ...

    def without_measurement(self, verdict: Verdict, why: str) -> Verdict:
        """``verdict`` with its measurement taken out, and a finding saying ``why``."""
        ...


def grader_kinds() -> dict[str, GraderKind[Any]]:
    """Every registered grader kind, by name (built-ins first)."""
    # Each registration is checked against the (runtime-checkable) protocol itself.
    kinds = registrations(GRADER_KINDS_HOOK, GraderKind)  # type: ignore[type-abstract]
    grade_tables()  # refuses a kind whose table does not name it
    return kinds


def grader_kind(name: str) -> GraderKind[Any]:
    """The registered kind called ``name``; a kind no plugin registers cannot grade."""
    kinds = grader_kinds()
    if name not in kinds:
        known = ", ".join(repr(k) for k in kinds) or "none"
        raise GradingError(f"no grader kind {name!r} is registered (registered: {known})")
    return kinds[name]


def kind_arguments(spec: GradeSpec) -> dict[str, Any]:
    """The kind's own ``[grade]`` fields (those beyond the common ones), as JSON values."""
    common = set(GradeSpec.model_fields)
    return spec.model_dump(mode="json", exclude=common)
