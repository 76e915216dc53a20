"""The ``[improve]`` table of an improvement task (docs/improvement.md).

An improvement task is an ordinary task whose repository already works: its ``[grade]`` (of kind
``improve``) is the gate, the task's tests with the hidden files, and ``[improve]`` names the
number a command prints, which rounds of agent work should make better.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Direction = Literal["minimize", "maximize"]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ObjectiveFile(_Spec):
    """A file copied into the measuring copy only."""

    source: str
    """Path relative to the task folder."""
    target: str
    """Destination relative to the repository root."""

    @field_validator("target")
    @classmethod
    def _relative_inside(cls, value: str) -> str:
        parts = re.split(r"[\\/]+", value)
        if value.startswith(("/", "\\")) or ".." in parts or not value.strip():
            raise ValueError(f"must be a relative path inside the repository: {value!r}")
        return value


class ObjectiveSpec(_Spec):
    """The measured number."""

    command: str
    """Run in a measuring copy of its own, and exits 0. ``{measure} MODE -- COMMAND`` runs
    COMMAND under harnessdrive's objective runner, whose report alone gives the value (modes
    ``seconds``, ``cpu-seconds``, ``peak-memory-kb``, ``operations``); a plain command prints
    the value as the last number on stdout, or as a JSON line holding ``value``.
    ``{python}``, ``{workspace}`` and ``{sample}`` (the sample's index, from 1) are replaced."""
    direction: Direction = "minimize"
    """Whether smaller (``minimize``) or larger (``maximize``) is better."""
    unit: str = ""
    """What the number counts, for prompts and reports."""
    target: float | None = Field(default=None, ge=0)
    """A reference value; ``improve.progress`` is the share of the way to it."""
    repeats: int = Field(default=1, ge=1, le=100)
    """Samples per measurement; every sample is kept and noise-aware acceptance uses them all."""
    timeout: float = Field(default=120, gt=0)
    """Seconds for one sample."""
    inject: tuple[ObjectiveFile, ...] = ()
    """Files copied into the measuring copy only (never into the agent's workspace)."""


class EvaluatorSpec(_Spec):
    """In-loop measurements the agent may ask for."""

    budget: int = Field(default=0, ge=0)
    """Measurements per round; 0 is none."""
    max_evaluations: int | None = Field(default=None, ge=0)
    """Measurements over the whole trial."""


class ImproveSpec(_Spec):
    """``[improve]``: rounds of work on a measured objective, the best state kept."""

    objective: ObjectiveSpec
    """The measured number: its command, direction, unit, target, repeats and files."""
    rounds: int = Field(default=3, ge=1, le=100)
    """How many times the agent is asked to make it better."""
    keep_best: bool = True
    """Start each round from a fresh copy of the best checkpoint; false carries every change
    over."""
    min_improvement: float = Field(default=0.0, ge=0)
    """Relative: 0.05 is 5% better than the baseline, beyond the measured noise, to pass."""
    evaluator: EvaluatorSpec = EvaluatorSpec()
    session: Literal["fresh", "resume"] = "fresh"
    """``resume`` continues the CLI's session across rounds where the harness can."""
    overlays: tuple[str, ...] = ()
    """Reference overlays, folders relative to the task folder, applied one per round by the
    scripted improver and by ``check``: each must improve on the one before."""
    known_bad: str | None = None
    """A folder relative to the task folder whose files, laid over the base state, make a state
    known to be worse than any improvement: measured beside a trial's final state when it claims
    an improvement, it must come out worse (default: the untouched base state)."""

    @property
    def reference_folders(self) -> tuple[str, ...]:
        """The overlays and the known-bad folder: task files no agent may see."""
        return (*self.overlays, *((self.known_bad,) if self.known_bad is not None else ()))


class ImproveOverrides(_Spec):
    """A variant's ``improve`` table: settings of every improvement task it runs, instead of
    the task's own, so rounds and the evaluator's budget can be factors of a comparison."""

    rounds: int | None = Field(default=None, ge=1, le=100)
    """Rounds instead of the task's."""
    evaluator_budget: int | None = Field(default=None, ge=0)
    """The evaluator's measurements per round instead of the task's."""
    max_evaluations: int | None = Field(default=None, ge=0)
    """The evaluator's measurements over the trial instead of the task's."""
    session: Literal["fresh", "resume"] | None = None
    """``fresh`` or ``resume`` instead of the task's."""

    def applied(self, spec: ImproveSpec) -> ImproveSpec:
        """``spec`` with these overrides."""
        evaluator = spec.evaluator.model_copy(
            update={
                key: value
                for key, value in (
                    ("budget", self.evaluator_budget),
                    ("max_evaluations", self.max_evaluations),
                )
                if value is not None
            }
        )
        update: dict[str, object] = {"evaluator": evaluator}
        if self.rounds is not None:
            update["rounds"] = self.rounds
        if self.session is not None:
            update["session"] = self.session
        return spec.model_copy(update=update)
