"""One trial, from a fresh workspace to a TrialResult ready to record.

This is the trial boundary: anything unexpected below it is caught here and recorded as an
infrastructure failure of this trial, never as the agent's failure, and the run goes on.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from harnessdrive.accounting.trial_cost import NO_MODEL, Costing
from harnessdrive.grading.grader import GradingSetup
from harnessdrive.grading.verdict import StreamKept, Verdict
from harnessdrive.harnesses.base import AgentRequest, Harness
from harnessdrive.protocols.single import AttemptOutcome, run_attempt
from harnessdrive.protocols.stages import StageFailed, describe, stage
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
    RoundRecord,
    Status,
    Timing,
    Totals,
    TrialResult,
)
from harnessdrive.store.store import Store, utc_now
from harnessdrive.tasks.loading import Task
from harnessdrive.tasks.view import task_view
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.names import model_json
from harnessdrive.workspace.setup import SetupOutcome, run_setup
from harnessdrive.workspace.setup_reuse import SetupStates, reuse_setup


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
    """Prices each trial (accounting/trial_cost.py); the default prices nothing."""
    setup_states: SetupStates | None = None
    """Setup results shared by the trials of a run (workspace/setup_reuse.py)."""


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
        # Every report says which piece of machinery failed (protocols/stages.py).
        error = str(exc) if isinstance(exc, StageFailed) else f"internal error: {describe(exc)}"
        what = exc.stage if isinstance(exc, StageFailed) else "the trial machinery"
        return prepared.identity.model_copy(
            update={
                "status": "could_not_run",
                "finished": utc_now(),
                "seconds": Timing(total=round(now() - began, 3)),
                "rounds": (RoundRecord(status="could_not_run", agent=AgentSummary(error=error)),),
                "note": f"an infrastructure failure ({what}); not counted against the harness",
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
    with stage("snapshot build"):
        snapshot = ctx.snapshots.get(task)
    scratch = prepared.scratch
    with stage("workspace copy"):
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
    view = task_view(task, ctx.python)
    if task.spec.setup.commands:
        setup_log = paths.root / "setup.log"

        def run_in(root: Path, setup_home: Path, log: Path) -> SetupOutcome:
            return run_setup(
                task.spec.setup.commands,
                root=root,
                sandbox=sandbox,
                env=base_environment(setup_home, tmp),
                timeout=task.spec.setup.timeout,
                log=log,
                isolation=Isolation(
                    writable=(root, setup_home, tmp),
                    readonly=view.readonly,
                    network=task.spec.setup.network,
                ),
                values=view.values(root),
                stop=ctx.stop,
            )

        setup = reuse_setup(
            ctx.setup_states,
            task,
            snapshot,
            workspace,
            python=ctx.python,
            home=home,
            log=setup_log,
            run=run_in,
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
                    "rounds": (
                        RoundRecord(
                            status=status,
                            agent=AgentSummary(error="setup failed in the agent's workspace"),
                        ),
                    ),
                    "cost": NO_MODEL,
                    "note": f"see {setup_log}",
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
        readonly=view.readonly,
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
        setup_states=ctx.setup_states,
    )
    (scratch / "grading").mkdir()
    outcome = run_attempt(harness, request, snapshot, grading, diff_path=paths.diff)
    with stage("transcript recording"):
        paths.transcript.write_text(model_json(outcome.agent.transcript))
    total = now() - began
    timing = _timing(outcome, setup_seconds, total)
    return prepared.identity.model_copy(
        update={
            **base,
            "status": outcome.status,
            "outcome": outcome.verdict.outcome,
            "finished": utc_now(),
            "harness_version": outcome.agent.version,
            "seconds": timing,
            "rounds": (
                RoundRecord(
                    status=outcome.status,
                    outcome=outcome.verdict.outcome,
                    agent=_agent_summary(outcome),
                    diff=DiffStats(
                        files_changed=len(outcome.changes.files),
                        lines_added=outcome.changes.lines_added,
                        lines_deleted=outcome.changes.lines_deleted,
                        paths=outcome.changes.paths,
                        patch_bytes=outcome.changes.patch_bytes,
                    ),
                    grading=outcome.verdict,
                    seconds=timing,
                ),
            ),
            "totals": Totals(
                rounds=1,
                agent_seconds=timing.agent,
                turns=outcome.agent.transcript.turns or 0,
                tool_calls=outcome.agent.transcript.tool_calls,
                usage=outcome.agent.transcript.usage,
            ),
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
    commands = verdict.command_seconds
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
        stdout=StreamKept.of(agent.stdout_record),
        stderr=StreamKept.of(agent.stderr_record),
    )
