"""One trial, from a fresh workspace to a TrialResult ready to record.

This is the trial boundary: anything unexpected below it is caught here and recorded as an
infrastructure failure of this trial, never as the agent's failure, and the run goes on.
"""

from __future__ import annotations

import os
import shutil
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from harnessdrive.grading.grader import GradingSetup
from harnessdrive.grading.verdict import Verdict
from harnessdrive.harnesses.base import AgentRequest, Harness
from harnessdrive.protocols.single import AttemptOutcome, run_attempt
from harnessdrive.running.costing import NO_MODEL, Costing
from harnessdrive.running.plan import PlannedTrial, planned_identity
from harnessdrive.running.reaper import Reaper
from harnessdrive.running.snapshots import SnapshotCache
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.limits import Limits
from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import Isolation, Network, Sandbox
from harnessdrive.store.inflight import SCRATCH_MARKER, InflightRecord
from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import (
    AgentSummary,
    DiffStats,
    Status,
    Timing,
    TrialResult,
)
from harnessdrive.store.store import Store, utc_now
from harnessdrive.tasks.loading import Task
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.setup import run_setup


@dataclass
class TrialContext:
    store: Store
    sandbox: Sandbox
    snapshots: SnapshotCache
    scratch_root: Path
    python: str
    run_id: str
    keep: bool = False
    network: Network = "host"
    agent_timeout: float | None = None
    stop: StopToken = field(default_factory=StopToken)
    reaper: Reaper | None = None
    """Deletes scratch folders in the background; without one they are deleted in place."""
    costing: Costing = field(default_factory=Costing)
    """Prices each trial (running/costing.py); the default prices nothing."""


@dataclass(frozen=True)
class PreparedTrial:
    """A trial whose folder and in-flight record exist; the agent has not started yet."""

    planned: PlannedTrial
    paths: TrialPaths
    attempt: int
    scratch: Path
    inflight: Path
    started: str
    identity: TrialResult
    """The result as it would be recorded if the trial were interrupted now."""
    budget_usd: float | None = None
    """Spend left under the cap when the trial starts."""


def prepare_trial(
    planned: PlannedTrial, harness: Harness, ctx: TrialContext, *, budget_usd: float | None = None
) -> PreparedTrial:
    """Claim a fresh attempt folder and write the in-flight record (driver thread only)."""
    paths, attempt = ctx.store.begin_attempt(planned.trial_id)
    scratch = ctx.scratch_root / f"trial-{uuid.uuid4().hex[:12]}"
    scratch.mkdir(parents=True)
    (scratch / SCRATCH_MARKER).touch()
    started = utc_now()
    identity = TrialResult(
        trial_id=planned.trial_id,
        run_id=ctx.run_id,
        attempt=attempt,
        suite=planned.suite,
        task=planned.task.id,
        task_title=planned.task.spec.title,
        task_fingerprint=planned.task.fingerprint,
        variant=planned.variant,
        variant_label=planned.variant.label,
        harness=planned.variant.harness,
        repetition=planned.repetition,
        status="interrupted",
        outcome="not_graded",
        started=started,
        finished=started,
        sandbox=ctx.sandbox.name,
        note="the driver stopped before this trial finished",
        cost=ctx.costing.if_interrupted(planned.variant, harness),
        **planned_identity(planned),
    )
    record = InflightRecord(
        trial_id=planned.trial_id,
        attempt=attempt,
        started=started,
        scratch=str(scratch),
        pid=os.getpid(),
        interrupted=identity,
    )
    inflight = ctx.store.mark_inflight(record)
    return PreparedTrial(
        planned, paths, attempt, scratch, inflight, started, identity, budget_usd=budget_usd
    )


def execute_trial(prepared: PreparedTrial, harness: Harness, ctx: TrialContext) -> TrialResult:
    """Run a prepared trial to its result (safe to call from a worker thread)."""
    began = now()
    try:
        return _execute(prepared, harness, ctx, began)
    except Exception as exc:  # the trial boundary: record, never crash the run
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return prepared.identity.model_copy(
            update={
                "status": "could_not_run",
                "finished": utc_now(),
                "seconds": Timing(total=round(now() - began, 3)),
                "agent": AgentSummary(error=f"internal error: {detail}"),
                "note": "an infrastructure failure; not counted against the harness",
            }
        )
    finally:
        if ctx.keep:
            pass
        elif ctx.reaper is not None:
            ctx.reaper.discard(prepared.scratch)
        else:
            shutil.rmtree(prepared.scratch, ignore_errors=True)


def _execute(
    prepared: PreparedTrial, harness: Harness, ctx: TrialContext, began: float
) -> TrialResult:
    planned = prepared.planned
    task = planned.task
    sandbox = _trial_sandbox(ctx.sandbox, task)
    snapshot = ctx.snapshots.get(task)
    scratch = prepared.scratch
    workspace = copy_snapshot(snapshot, scratch / "workspace")
    home, tmp = scratch / "home", scratch / "tmp"
    home.mkdir()
    tmp.mkdir()
    paths = prepared.paths
    paths.prompt.write_text(task.prompt, encoding="utf-8")
    prompt_file = scratch / "prompt.md"
    prompt_file.write_text(task.prompt, encoding="utf-8")
    setup_seconds = 0.0
    base = {"base_commit": snapshot.commit, "base_source": snapshot.source}
    if task.spec.setup.commands:
        setup = run_setup(
            task.spec.setup.commands,
            root=workspace,
            sandbox=sandbox,
            env=base_environment(home, tmp),
            timeout=task.spec.setup.timeout,
            log=paths.root / "setup.log",
            isolation=Isolation(writable=(workspace, home, tmp), network=task.spec.setup.network),
            values={"python": ctx.python, "workspace": str(workspace)},
            stop=ctx.stop,
        )
        setup_seconds = setup.seconds
        if not setup.ok:
            status: Status = "interrupted" if setup.stopped else "could_not_run"
            return prepared.identity.model_copy(
                update={
                    **base,
                    "status": status,
                    "finished": utc_now(),
                    "seconds": Timing(setup=round(setup_seconds, 3), total=now() - began),
                    "agent": AgentSummary(error="setup failed in the agent's workspace"),
                    "cost": NO_MODEL,
                    "note": "see setup.log",
                }
            )
    request = AgentRequest(
        task=task,
        variant=planned.variant,
        prompt=task.prompt,
        prompt_file=prompt_file,
        workspace=workspace,
        home=home,
        tmp=tmp,
        logs=paths.root,
        timeout=ctx.agent_timeout or task.spec.limits.agent_timeout,
        sandbox=sandbox,
        network=ctx.network,
        python=ctx.python,
        stop=ctx.stop,
        budget_usd=prepared.budget_usd,
    )
    grading = GradingSetup(
        task=task,
        snapshot=snapshot,
        scratch=scratch / "grading",
        logs=paths.root,
        sandbox=sandbox,
        python=ctx.python,
        stop=ctx.stop,
        keep_copy=True,  # the whole scratch folder goes once the trial is recorded
    )
    (scratch / "grading").mkdir()
    outcome = run_attempt(harness, request, snapshot, grading, diff_path=paths.diff)
    paths.transcript.write_text(outcome.agent.transcript.model_dump_json(indent=2))
    total = now() - began
    return prepared.identity.model_copy(
        update={
            **base,
            "status": outcome.status,
            "outcome": outcome.verdict.outcome,
            "finished": utc_now(),
            "harness_version": outcome.agent.version,
            "seconds": _timing(outcome, setup_seconds, total),
            "agent": _agent_summary(outcome),
            "diff": DiffStats(
                files_changed=len(outcome.changes.files),
                lines_added=outcome.changes.lines_added,
                lines_deleted=outcome.changes.lines_deleted,
                paths=outcome.changes.paths,
            ),
            "grading": outcome.verdict,
            "cost": ctx.costing.of_run(
                planned.variant,
                harness,
                outcome.agent,
                outcome.status,
                prepared.started,
                ledger=paths.cost,
            ),
            "workspace": str(workspace) if ctx.keep else None,
            "note": None,
        }
    )


def _trial_sandbox(sandbox: Sandbox, task: Task) -> Sandbox:
    """The run's sandbox with this task's limits."""
    spec = task.spec.limits
    base = sandbox.settings.limits or Limits()
    return sandbox.with_limits(
        base.with_overrides(
            processes=spec.processes,
            memory_mb=spec.memory_mb,
            file_size_mb=spec.file_size_mb,
            disk_mb=spec.disk_mb,
        )
    )


def _timing(outcome: AttemptOutcome, setup_seconds: float, total: float) -> Timing:
    verdict: Verdict = outcome.verdict
    commands = sum(run.seconds for run in (verdict.visible, verdict.hidden) if run is not None) + (
        verdict.setup.seconds if verdict.setup else 0.0
    )
    agent = outcome.agent.seconds
    return Timing(
        setup=round(setup_seconds, 3),
        agent=round(agent, 3),
        grading=round(verdict.seconds, 3),
        total=round(total, 3),
        overhead=round(max(total - setup_seconds - agent - commands, 0.0), 4),
    )


def _agent_summary(outcome: AttemptOutcome) -> AgentSummary:
    agent = outcome.agent
    transcript = agent.transcript
    return AgentSummary(
        exit_code=agent.exit_code,
        error=agent.error,
        hint=agent.hint,
        model=transcript.model,
        turns=transcript.turns,
        tool_calls=transcript.tool_calls,
        calls=len(transcript.calls),
        usage=transcript.usage,
        permission_denials=transcript.permission_denials,
    )
