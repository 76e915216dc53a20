"""A prepared trial and what comes back from it: the job an executor runs and the settings it
runs under (the executor interface is executors/interface.py).

A :class:`TrialJob` holds no live object of the driver (no store, no lock, no thread), so an
executor may ship it to another process or machine.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harnessdrive.accounting.trial_cost import Costing
from harnessdrive.harnesses.base import Harness
from harnessdrive.protocols.base import GivenChange
from harnessdrive.protocols.phases import PhaseListener
from harnessdrive.sandbox.runner import Network, SandboxKind
from harnessdrive.sandbox.scratch import PREFIX
from harnessdrive.store.checkpoint import RoundCheckpoint
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import Task
from harnessdrive.tasks.models import VariantSpec


@dataclass(frozen=True)
class RetryPolicy:
    """How a trial whose provider answered rate-limited or overloaded is tried again."""

    tries: int = 4
    """Tries in all; the last one's result stands."""
    base_seconds: float = 10.0
    """The pause before the second try; it doubles before each later one."""
    max_seconds: float = 120.0

    def pause(self, retry: int, jitter: float) -> float:
        """The pause before retry number ``retry`` (1 for the second try), ``jitter`` in [0, 1]:
        between half and all of the doubled pause, so trials refused together spread out."""
        doubled = min(self.max_seconds, self.base_seconds * 2.0 ** (retry - 1))
        return float(doubled * (0.5 + jitter / 2))


@dataclass(frozen=True)
class TrialSettings:
    """How one trial runs, beyond its task and variant."""

    agent_timeout: float | None = None
    """The agent's time limit; None takes the task's."""
    network: Network = "host"
    """The agent's network."""
    budget_usd: float | None = None
    """Spend left under the cap when the trial starts, for a harness that takes a cap."""
    costing: Costing = field(default_factory=Costing)
    """Prices the trial; the default prices nothing."""
    run_visible: bool = True
    """False skips the task's visible command when grading (its counts never decide)."""
    run_twin: bool = True
    """False runs no twin in grading (grading/context.py says when that is safe)."""
    record_folder: Path | None = None
    """Where the receiver will put the job's files. A message that names one of them (a setup
    log, say) names it there, so it still points at the file once the trial is recorded."""
    retry: RetryPolicy = RetryPolicy()
    """Tries of a trial refused by its provider for load (trial/rate_limits.py)."""


@dataclass(frozen=True)
class TrialJob:
    """One prepared trial, ready to run anywhere."""

    key: str
    """Unique among the jobs of one executor: a trial id and attempt, or a check case."""
    task: Task
    variant: VariantSpec
    harness: Harness
    identity: TrialResult
    """The result as it is recorded if the trial never finishes (``interrupted``)."""
    protocol: str = "single"
    """The trial protocol's registered name (protocols/builtin.py), resolved by the driver from
    the variant and the task."""
    settings: TrialSettings = TrialSettings()
    on_round: Callable[[RoundCheckpoint], None] | None = None
    """Called on the worker after each round of a protocol with several rounds; the driver's
    writes the checkpoint into the trial folder. An executor on other machines carries the
    call back to the driver (it must stay picklable: a module function, say a partial)."""
    resume: RoundCheckpoint | None = None
    """The checkpoint of an earlier attempt that was killed: the protocol continues after it."""
    change: GivenChange | None = None
    """The change a ``known-change`` job grades as given (trial/standalone.py builds one)."""
    on_phase: PhaseListener | None = None
    """Told on the worker, throttled, what the trial is doing (protocols/phases.py): the driver's
    shows it. An executor on other machines carries it back like ``on_round``."""


@dataclass(frozen=True)
class JobResult:
    """What a finished job hands back."""

    result: TrialResult
    artifacts: Path
    """A folder laid out like a trial folder (prompt.md, agent.stdout, diff.patch,
    transcript.json, cost.json, grading logs, ``rounds/N/`` for later rounds). It belongs to
    the receiver, which moves its files into the trial folder and removes it. Do so before
    closing the executor: closing removes whatever is left of the worker's scratch."""


@dataclass(frozen=True)
class WorkerSettings:
    """What an executor needs to build its workers (each builds its own sandbox, scratch root,
    snapshot cache and stop token: trial/worker.py)."""

    jobs: int = 1
    """Trials at once."""
    sandbox: SandboxKind = "auto"
    hidden: tuple[Path, ...] = ()
    """What no sandboxed process may see: the results folder, the suite, every task, its
    repository and hidden files. Each worker adds its own scratch root."""
    private: tuple[Path, ...] = ()
    """Covered like ``hidden``, but tool folders inside are shown again (the user's HOME)."""
    shown: tuple[Path, ...] = ()
    """Extra folders every sandboxed process sees read-only."""
    python: str = sys.executable
    keep: bool = False
    """Keep every trial's scratch folder (workspaces, private HOMEs) instead of removing it."""
    scratch_prefix: str = PREFIX
    footprint: int | None = None
    """Bytes the trials' copies are expected to take at most, given only when every change the
    workers run is known (mining, ``check``, built-in agents): their scratch root may then live
    on a memory file system with room for it (sandbox/scratch_place.py). None: an agent runs."""
    address: str | None = None
    """The cluster to join, for an executor that runs trials elsewhere (``auto``,
    ``ray://host:port``); None lets it choose (a local one)."""
    log: Path | None = None
    """Where an executor writes its own messages (a cluster's, say) during a run; None leaves
    them where they go."""
