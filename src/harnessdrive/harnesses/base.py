"""The contract between the runner and every harness adapter.

A harness gets an :class:`AgentRequest` (prompt, fresh workspace, private HOME, sandbox, limits)
and returns an :class:`AgentRun` holding a Transcript. It never grades and never records: the
runner does both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from harnessdrive.harnesses.provenance import RunSetting
from harnessdrive.proxy.traffic import Traffic
from harnessdrive.sandbox.output import StreamRecord
from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import Network, Sandbox
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Transcript

if TYPE_CHECKING:
    from harnessdrive.tasks.loading import Task


@dataclass(frozen=True)
class HarnessInfo:
    name: str
    installed: bool
    version: str | None = None
    binary: str | None = None
    detail: str = ""
    """What it supports, or why it is not usable here."""
    uses_model: bool = False
    """True when its runs spend model tokens (and so need a price and a spend cap)."""
    found: str = ""
    """How its executable was found (``PATH``, a variable, the pinned install), or the fix
    when it was not; empty for harnesses without one."""
    origin: str = ""
    """Who registered it: ``built-in``, or the plugin (and its distribution)."""


Billing = Literal["api", "subscription"]
"""How a run is paid for: per token through an API key, or by a subscription (a ChatGPT or
Claude plan login). A subscription run is still priced, at the API-equivalent cost."""


@dataclass(frozen=True)
class PlannedModel:
    """A model a run may bill: the main one, or a helper (subagents, summaries, titles)."""

    model: str
    provider: str | None = None
    """Who bills it (``anthropic``, ``openai``, ...), when the harness knows."""


@dataclass(frozen=True)
class ModelPlan:
    """The models a variant's runs will use, known before any run starts.

    The runner prices each of them before the first trial (an unpriced one stops the run) and
    estimates a trial from the cheapest to the dearest. Empty: the harness cannot tell.
    """

    models: tuple[PlannedModel, ...] = ()
    source: str = ""
    """Where the choice came from: ``--model``, a config file, the CLI's default."""
    billing: Billing | None = None
    """How the runs will be paid for, when the harness can tell before running."""


@runtime_checkable
class PlansModels(Protocol):
    """Optional part of a harness that spends tokens: say which models a variant will use."""

    def plan_models(self, variant: VariantSpec) -> ModelPlan: ...


def planned_models(harness: object, variant: VariantSpec) -> ModelPlan:
    """The harness's own plan when it has one, else the variant's pinned model, else nothing."""
    if isinstance(harness, PlansModels):
        return harness.plan_models(variant)
    if variant.model:
        return ModelPlan(models=(PlannedModel(variant.model),), source="--model")
    return ModelPlan()


@dataclass(frozen=True)
class AgentRequest:
    task: Task
    variant: VariantSpec
    prompt: str
    prompt_file: Path
    """The prompt as a file outside the workspace."""
    workspace: Path
    home: Path
    """A private HOME made fresh for this trial; config folders go inside it."""
    tmp: Path
    logs: Path
    """The trial's results folder: stdout, stderr and copies of session logs go here."""
    timeout: float
    sandbox: Sandbox
    network: Network
    python: str
    stop: StopToken | None = None
    budget_usd: float | None = None
    """Spend left under the cap, for harnesses that take a cap of their own."""
    readonly: tuple[Path, ...] = ()
    """Folders the agent may read but not change: the task's view (tasks/view.py)."""
    repetition: int = 1
    """N of ``--repeat``: which repeat of this task and variant this run is."""
    services: Mapping[str, str] = field(default_factory=dict)
    """Variables naming services run for this trial alone (a differential task's oracle, on
    127.0.0.1), set in the environment of the agent and its commands."""
    resume_session: str | None = None
    """A session of this harness an earlier run left under the same HOME, to continue instead
    of starting a new one (an improvement task's ``session = "resume"``); set only for a
    harness that :func:`can_resume`."""

    @property
    def stdout(self) -> Path:
        return self.logs / "agent.stdout"

    @property
    def stderr(self) -> Path:
        return self.logs / "agent.stderr"


@dataclass(frozen=True)
class AgentRun:
    exit_code: int | None
    timed_out: bool
    seconds: float
    transcript: Transcript = field(default_factory=Transcript)
    stopped: bool = False
    error: str | None = None
    hint: str | None = None
    """How to fix an error that will repeat on every task (sign in, upgrade, install)."""
    could_not_run: bool = False
    """The harness never got to work, as known before its process started (a missing binary,
    an unusable version, an unset key variable), or as a scripted agent of harnessdrive's own
    declares. Never set from what the agent's process printed."""
    limit: str | None = None
    """A sandbox limit the agent hit (``processes``, ``memory``, ``file_size``, ``disk``)."""
    version: str | None = None
    stdout_record: StreamRecord | None = None
    """How much the agent printed to stdout and how much of it ``agent.stdout`` keeps."""
    stderr_record: StreamRecord | None = None
    setting: RunSetting | None = None
    """The effective configuration's hash and the tool allow-list, where the harness knows."""
    traffic: Traffic | None = None
    """The model calls harnessdrive's proxy forwarded for this run; None when the run's model
    traffic did not go through it (a scripted agent, a CLI with no base-URL setting)."""


@runtime_checkable
class ResumesSessions(Protocol):
    """Optional part of a harness that can continue a session an earlier run of it left: the
    arguments that resume ``session_id``. The run then reports the same session id."""

    def resume_args(self, session_id: str) -> list[str]: ...


def can_resume(harness: object) -> bool:
    return isinstance(harness, ResumesSessions)


class Harness(Protocol):
    @property
    def name(self) -> str: ...

    def info(self) -> HarnessInfo:
        """Installed or not, version, what it supports. Cheap enough to call per run."""
        ...

    def check_variant(self, variant: VariantSpec) -> None:
        """Refuse bad settings (unknown effort, missing template) before any trial runs."""
        ...

    def run(self, request: AgentRequest) -> AgentRun: ...
