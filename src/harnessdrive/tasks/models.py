"""The task and suite file formats (``task.toml``, ``suite.toml``) as pydantic models.

These are boundary models: unknown keys are errors, and their JSON Schema is published by
``harnessdrive schema task|suite``. Paths inside them are relative to the file's folder until
:mod:`harnessdrive.tasks.loading` resolves them.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    field_validator,
    model_validator,
)

from harnessdrive.tasks.check_models import CheckSpec, ScopeSpec
from harnessdrive.tasks.improve_models import ImproveOverrides, ImproveSpec
from harnessdrive.tasks.matrix_models import MatrixSpec, TreatmentSpec

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
VARIANT_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}$"
"""A variant's name may also hold ``@`` and ``+``, as the names of swept arms do
(``codex@gpt-5.5+max+terse``, docs/matrix.md)."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RepoSpec(_Spec):
    """Where the task's starting files come from."""

    path: str
    """A git repository or a plain folder, relative to the task folder (or absolute)."""
    ref: str | None = None
    """A commit, tag or branch of a git repository. Without it, a folder that holds a ``.git``
    is read at ``HEAD`` and any other folder is read from disk as it is."""


class SetupSpec(_Spec):
    """Commands run in every fresh copy before the agent and before grading."""

    commands: tuple[str, ...] = ()
    """Shell commands, run in order in the repository root; ``{python}`` is harnessdrive's
    interpreter."""
    timeout: float = Field(default=600, gt=0)
    """Seconds for all setup commands together."""
    network: Literal["none", "host"] = "none"
    """Setup runs without network unless the task says ``host`` (to install dependencies)."""
    shared: tuple[str, ...] = ()
    """Folders outside the repository that setup, the agent and the tests may read but never
    change (a mined suite's shared test environments); relative to the task folder."""
    reuse: bool = True
    """Run setup once per dependency state and copy what it added into every fresh copy. Say
    ``false`` when its result depends on the project's own files (a non-editable install)."""


class HiddenFile(_Spec):
    """A file injected into the grading copy only; the agent never sees it."""

    source: str
    """Path relative to the task folder."""
    target: str
    """Destination relative to the repository root."""

    @field_validator("target")
    @classmethod
    def _relative_inside(cls, value: str) -> str:
        return _check_relative(value)


DEFAULT_GRADER_KIND = "tests"
"""The grader kind of a ``[grade]`` table that names none."""


class GradeSpec(_Spec):
    """How the agent's change is judged: the fields every grader kind shares.

    They say what goes into the grading copy (hidden files, what is protected, restored or
    removed). Each grader kind's table is a subclass that adds the kind's own fields and fixes
    ``kind`` to its name (``harnessdrive.grading.kinds.base``); a task file's ``[grade]`` is
    read as the table of the kind it names.
    """

    kind: str = DEFAULT_GRADER_KIND
    """The grader kind that judges the change (``tests`` when absent); the other keys of
    ``[grade]`` are that kind's."""
    hidden: tuple[HiddenFile, ...] | None = None
    """Hidden files. Default: every file under ``hidden/`` to the same relative path."""
    protected: tuple[str, ...] = ()
    """Globs of paths the agent must not change; a change is a tamper finding and is not graded."""
    restored: tuple[str, ...] = ()
    """Globs of paths put back to the base state before grading, without a finding."""
    removed: tuple[str, ...] = ()
    """Paths deleted from the grading copy along with the hidden files (tests the task's
    change deleted, for a mined task)."""
    timeout: float = Field(default=600, gt=0)
    """Seconds for each grading command."""
    scope: ScopeSpec | None = None
    """The files the change is about; a change elsewhere is an ``out-of-scope`` finding."""

    @property
    def visible_test_command(self) -> str | None:
        """A command the agent may run to check its own work, when the kind has one."""
        return None

    @classmethod
    def table_keys(cls) -> tuple[str, ...]:
        """Every key a ``[grade]`` table of some registered kind may hold (for "did you mean")."""
        from harnessdrive.tasks.grade_kinds import grade_tables

        keys = dict.fromkeys(cls.model_fields)
        for table in grade_tables().values():
            keys.update(dict.fromkeys(table.model_fields))
        return tuple(keys)


class LimitsSpec(_Spec):
    """Time and resource limits."""

    agent_timeout: float = Field(default=900, gt=0)
    """Seconds of wall clock the agent gets; it is then stopped and graded on what it left."""
    processes: int | None = Field(default=None, gt=0)
    """Processes alive at once in one sandboxed command (default 1024)."""
    memory_mb: int | None = Field(default=None, gt=0)
    """MiB resident in one sandboxed command's processes (default: 3/4 of the machine)."""
    file_size_mb: int | None = Field(default=None, gt=0)
    """MiB in any one file written (default 8192)."""
    disk_mb: int | None = Field(default=None, gt=0)
    """MiB under the writable folders: workspace, private HOME and tmp (default 32768)."""
    diff_file_mb: int = Field(default=50, gt=0)
    """MiB above which a file the agent left is not part of its change (an ``oversized-file``)."""


class EnvironmentSpec(_Spec):
    """The system a task's processes run on instead of the host's: an OCI image
    (docs/environments.md)."""

    image: str | None = None
    """An OCI layout folder (``oci:PATH[:TAG]``), a ``docker save`` archive
    (``docker-archive:PATH``) or a registry reference (``docker://NAME:TAG``); paths relative
    to the task folder."""
    dockerfile: str | None = None
    """A Dockerfile to build the image from (with buildah or podman), relative to the task
    folder; its folder is the build context."""
    workdir: str | None = None
    """The folder the workspace is shown at and commands start in, instead of the image's."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables set on top of the image's own."""

    @model_validator(mode="after")
    def _one_source(self) -> EnvironmentSpec:
        if (self.image is None) == (self.dockerfile is None):
            raise ValueError("give exactly one of 'image' and 'dockerfile'")
        return self


class TaskSpec(_Spec):
    """A ``task.toml``."""

    id: str = Field(pattern=ID_PATTERN)
    """The task's name in results: letters, digits, '.', '_' and '-'; unique in its suite."""
    title: str = ""
    """A short human title for reports."""
    prompt: str | None = None
    """What the agent is asked to do (or give ``prompt_file``)."""
    prompt_file: str | None = None
    """Read the prompt from this file (relative to the task folder) instead."""
    repo: RepoSpec
    """Where the starting files come from."""
    setup: SetupSpec = SetupSpec()
    """Commands run in every fresh copy before the agent and before grading."""
    grade: SerializeAsAny[GradeSpec]
    """How the agent's change is judged: a table of the grader kind its ``kind`` names."""
    limits: LimitsSpec = LimitsSpec()
    """Time and resource limits of the agent and of every sandboxed command."""
    check: CheckSpec = CheckSpec()
    """Self-test fixtures for ``harnessdrive check``."""
    protocol: str = "single"
    """The trial protocol, by its registered name: ``single`` lets the agent work once;
    ``improve`` (the default of a task with ``[improve]``) runs rounds on an objective."""
    improve: ImproveSpec | None = None
    """An improvement task's objective and rounds (docs/improvement.md)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form data kept with the task (mined tasks store their commit here)."""
    environment: EnvironmentSpec | None = None
    """An OCI image whose root file system setup, the agent and grading run on (bubblewrap
    only); without it they run on the host's system, seen read-only."""

    @field_validator("grade", mode="before")
    @classmethod
    def _grade_of_its_kind(cls, value: Any) -> Any:
        # Kinds are plugins; their registry reads this module's GradeSpec, so it loads late.
        from harnessdrive.tasks.grade_kinds import grade_spec_of_kind

        return grade_spec_of_kind(value)

    @model_validator(mode="before")
    @classmethod
    def _improve_protocol(cls, data: Any) -> Any:
        # An improvement task's defaults: the improve protocol, its tests the gate.
        if not (isinstance(data, dict) and "improve" in data):
            return data
        data = {"protocol": "improve", **data}
        if isinstance(data.get("grade"), dict) and "kind" not in data["grade"]:
            data["grade"] = {**data["grade"], "kind": "improve"}
        return data

    @model_validator(mode="after")
    def _improve_gate(self) -> TaskSpec:
        if self.improve is not None and self.grade.kind != "improve":
            raise ValueError("a task with [improve] needs a [grade] of kind 'improve' (its gate)")
        return self

    @model_validator(mode="after")
    def _one_prompt(self) -> TaskSpec:
        if (self.prompt is None) == (self.prompt_file is None):
            raise ValueError("give exactly one of 'prompt' and 'prompt_file'")
        return self


class VariantSpec(_Spec):
    """One configured arm: a harness plus its settings."""

    harness: str
    """A registered harness name (``harnessdrive harnesses``) or ``package.module:Factory``."""
    name: str | None = Field(default=None, pattern=VARIANT_NAME_PATTERN)
    """How results name this arm. Default: the harness name, plus ``@model`` when one is set."""
    model: str | None = None
    """The model the harness's CLI is asked to use; only for harnesses that run a model."""
    effort: str | None = None
    """Reasoning effort, from the harness's own ladder (``harnessdrive harnesses``)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Harness-specific settings, e.g. ``template`` for the ``command`` harness."""
    protocol: str | None = None
    """A trial protocol for this arm's trials instead of each task's own ``protocol``."""
    improve: ImproveOverrides | None = None
    """For improvement tasks: ``rounds``, ``evaluator_budget``, ``max_evaluations`` and
    ``session`` instead of each task's own (docs/improvement.md)."""
    treatment: TreatmentSpec | None = None
    """An overlay folder copied over the workspace first (docs/matrix.md); None: the control."""
    baseline: bool = False
    """A calibration arm: reports rank and show it, never call it best, and compare the other
    arms with each other rather than with it (docs/report.md)."""

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        label = f"{self.harness}@{self.model}" if self.model else self.harness
        if self.treatment is not None:
            label += f"+{self.treatment.name}"
        return label


class SuiteSpec(_Spec):
    """A ``suite.toml``."""

    name: str = Field(pattern=ID_PATTERN)
    """The suite's name in results and reports: letters, digits, '.', '_' and '-'."""
    description: str = ""
    """What the suite is about, for people."""
    tasks: tuple[str, ...] = ("tasks/*",)
    """Task folders, as paths or globs relative to the suite folder."""
    variants: tuple[str | VariantSpec, ...] = ()
    """Default arms when ``run`` gets no ``--harness``: harness names or full variant tables."""
    matrix: MatrixSpec | None = None
    """A sweep over the default arms (docs/matrix.md); ``run`` without arms runs it."""
    concurrency: dict[str, Annotated[int, Field(ge=1)]] = Field(default_factory=dict)
    """At most N trials at once of a harness, a variant label or ``provider:NAME``
    (running/concurrency.py); ``--limit`` overrides."""

    def variant_specs(self) -> tuple[VariantSpec, ...]:
        return tuple(VariantSpec(harness=v) if isinstance(v, str) else v for v in self.variants)


def _check_relative(value: str) -> str:
    parts = re.split(r"[\\/]+", value)
    if value.startswith(("/", "\\")) or ".." in parts or not value.strip():
        raise ValueError(f"must be a relative path inside the repository: {value!r}")
    return value
