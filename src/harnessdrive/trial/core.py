"""The trial core: one prepared trial, from a fresh workspace to a result and its files.

Every executor calls :func:`run_job` on its worker. It builds the workspace from the worker's
snapshot cache, runs the task's setup, looks up the job's protocol by name and lets it drive
the rounds, prices the agent's calls, and writes every file the trial keeps into a new folder
that it hands back; the receiver records them (running/recording.py). It never touches the
results store.

This is the trial boundary: anything unexpected below it is caught here and recorded as an
infrastructure failure of this trial, never as the agent's failure, and the run goes on.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harnessdrive.accounting.ledger import ledger_costs
from harnessdrive.accounting.trial_cost import NO_MODEL
from harnessdrive.errors import WorkspaceError
from harnessdrive.export.atif import TRAJECTORY_FILE, trajectory_json
from harnessdrive.grading.grader import GradingSetup
from harnessdrive.grading.measuring import measure_change
from harnessdrive.grading.objective import Measurement
from harnessdrive.grading.verdict import Verdict
from harnessdrive.harnesses.base import AgentRequest
from harnessdrive.protocols import phases
from harnessdrive.protocols.base import ProtocolInputs, ProtocolOutcome, needs_workspace
from harnessdrive.protocols.registry import get_protocol
from harnessdrive.protocols.round import graded
from harnessdrive.protocols.stages import StageFailed, stage
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.limits import Limits
from harnessdrive.sandbox.runner import Isolation, Sandbox
from harnessdrive.store.checkpoint import RoundCheckpoint
from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import (
    AgentSummary,
    RoundRecord,
    Status,
    Timing,
    TrialResult,
)
from harnessdrive.store.store import utc_now
from harnessdrive.tasks.loading import Task
from harnessdrive.tasks.view import TaskView, task_view
from harnessdrive.trial.failures import machinery_failure
from harnessdrive.trial.job import JobResult, TrialJob
from harnessdrive.trial.outcome import trial_result
from harnessdrive.trial.paths import TrialScratch
from harnessdrive.trial.rate_limits import with_retries
from harnessdrive.trial.treatments import trial_snapshot
from harnessdrive.trial.worker import WorkerContext
from harnessdrive.workspace.changes import Changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.names import model_json
from harnessdrive.workspace.setup import SetupOutcome, run_setup
from harnessdrive.workspace.setup_reuse import reuse_setup
from harnessdrive.workspace.snapshot import Snapshot

ROUNDS_FOLDER = "rounds"
EVALUATIONS_FOLDER = "evaluations"
"""The evaluator's measurements of a round: their logs in ``evaluations/<call>/``."""


def round_paths(trial: TrialPaths, number: int) -> TrialPaths:
    """Round ``number``'s files: round 1's at the trial folder's top, round N's in rounds/N/."""
    return trial if number == 1 else TrialPaths(trial.root / ROUNDS_FOLDER / str(number))


def run_job(job: TrialJob, worker: WorkerContext) -> JobResult:
    """Run ``job`` on ``worker`` to its result (safe to call from any worker thread)."""
    artifacts = worker.new_artifacts()
    if worker.stop.stopped:
        stopped = job.identity.revised(finished=utc_now())
        return JobResult(stopped, artifacts)
    began = now()

    def one_try() -> TrialResult:
        scratch: TrialScratch | None = None
        try:
            scratch = worker.new_trial()
            return _run(job, worker, scratch, TrialPaths(artifacts), began)
        except Exception as exc:  # the trial boundary: record, never crash the run
            return _infrastructure_failure(job, exc, began)
        finally:
            if scratch is not None:
                worker.discard(scratch)

    with phases.reporting(_reporter(job)):
        result = with_retries(one_try, artifacts, job.settings.retry, worker.stop)
    return JobResult(_named_where_recorded(result, artifacts, job), artifacts)


def _reporter(job: TrialJob) -> phases.PhaseReporter | None:
    """Who hears what the trial is doing, when its job asks."""
    if job.on_phase is None:
        return None
    price = phases.call_price(job.settings.costing, job.variant, job.identity.started)
    return phases.PhaseReporter(job.on_phase, price)


def _infrastructure_failure(job: TrialJob, exc: Exception, began: float) -> TrialResult:
    # Every report says which piece of machinery failed (protocols/stages.py).
    return machinery_failure(job.identity, exc, now() - began)


def failed_job(job: TrialJob, worker: WorkerContext, exc: BaseException) -> JobResult:
    """``job`` handed back as its machinery's failure, when ``exc`` escaped the trial core
    itself (out of memory, say): what the executor records instead of losing the trial."""
    try:
        artifacts = worker.new_artifacts()
    except OSError:  # no room even for an empty folder: hand back one that does not exist
        artifacts = worker.paths.root / "no-artifacts"
    return JobResult(machinery_failure(job.identity, exc), artifacts)


class _Trial:
    """One running trial's pieces, shared by its rounds."""

    def __init__(
        self,
        job: TrialJob,
        worker: WorkerContext,
        scratch: TrialScratch,
        paths: TrialPaths,
        *,
        agentless: bool = False,
    ) -> None:
        self.job = job
        self.worker = worker
        self.scratch = scratch
        self.paths = paths
        self.task = job.task
        self.agentless = agentless
        # With no agent, grading runs in the worker's sandbox without the task's per-trial
        # limits, as a known change has always been graded (protocols/known_change.py).
        self.sandbox = worker.sandbox if agentless else _trial_sandbox(worker.sandbox, job.task)
        self.view: TaskView = task_view(job.task, worker.python)
        self._lock = threading.Lock()
        self._gradings = 0
        given = job.change.base if job.change is not None else None
        with stage("snapshot build"):
            self.snapshot = given or trial_snapshot(worker.snapshots, job.task, job.variant)

    def round_paths(self, number: int) -> TrialPaths:
        paths = round_paths(self.paths, number)
        paths.root.mkdir(parents=True, exist_ok=True)
        return paths

    def round_scratch(self, number: int) -> Path:
        folder = self.scratch.round(number).root
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def copy(self, number: int, start: Snapshot | None = None) -> Path:
        """A fresh copy of ``start`` (the base snapshot) for round ``number``."""
        scratch = self.scratch.round(number)
        with stage("workspace copy"):
            workspace = copy_snapshot(start or self.snapshot, scratch.workspace)
        for folder in (scratch.home, scratch.tmp):
            folder.mkdir(parents=True, exist_ok=True)
        return workspace

    def new_workspace(self, round_number: int, start: Snapshot | None = None) -> Path:
        phases.phase("setup")
        workspace = self.copy(round_number, start)
        setup = self.setup(round_number, start)
        if not setup.ok:
            log = self.round_paths(round_number).root / "setup.log"
            raise WorkspaceError(f"setup failed in round {round_number}'s workspace; see {log}")
        return workspace

    def setup(self, number: int, start: Snapshot | None = None) -> SetupOutcome:
        """The task's setup in round ``number``'s fresh copy; its log kept as setup.log."""
        task = self.task
        scratch = self.scratch.round(number)
        if not task.spec.setup.commands:
            return SetupOutcome((), 0, False, 0.0)
        tmp = scratch.tmp

        def run_in(root: Path, setup_home: Path, log: Path) -> SetupOutcome:
            return run_setup(
                task.spec.setup.commands,
                root=root,
                sandbox=self.sandbox,
                env=base_environment(setup_home, tmp),
                timeout=task.spec.setup.timeout,
                log=log,
                isolation=Isolation(
                    writable=(root, setup_home, tmp),
                    readonly=self.view.readonly,
                    network=task.spec.setup.network,
                ),
                values=self.view.values(root),
                stop=self.worker.stop,
            )

        return reuse_setup(
            self.worker.setup_states,
            task,
            start or self.snapshot,
            scratch.workspace,
            python=self.worker.python,
            home=scratch.home,
            log=self.round_paths(number).root / "setup.log",
            run=run_in,
        )

    def grading_folder(self, number: int) -> Path:
        """A new, empty folder for one grading in round ``number``: every grading and every
        measurement of a round gets its own, so none can find another's copy in its way."""
        with self._lock:
            self._gradings += 1
            made = self._gradings
        folder = self.scratch.round(number).grading / str(made)
        folder.mkdir(parents=True)
        return folder

    def measure(self, changes: Changes, number: int, call: int) -> Measurement:
        """The objective alone on ``changes`` (the evaluator's call ``call`` of round
        ``number``), its logs in ``evaluations/<call>/`` of that round's folder."""
        folder = self.grading_folder(number)
        try:
            return measure_change(self._grading_setup(number, folder, call), changes)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _grading_setup(self, number: int, folder: Path, call: int | None = None) -> GradingSetup:
        logs = self.round_paths(number).root
        return GradingSetup(
            task=self.task,
            snapshot=self.snapshot,
            scratch=folder,
            logs=logs if call is None else logs / EVALUATIONS_FOLDER / str(call),
            sandbox=self.sandbox,
            python=self.worker.python,
            stop=self.worker.stop,
            setup_states=self.worker.setup_states,
        )

    def grade(self, changes: Changes, number: int) -> Verdict:
        phases.phase("grading")
        folder = self.grading_folder(number)
        setup = GradingSetup(
            task=self.task,
            snapshot=self.snapshot,
            scratch=folder,
            logs=self.round_paths(number).root,
            sandbox=self.sandbox,
            python=self.worker.python,
            stop=self.worker.stop,
            keep_copy=True,  # the whole scratch folder goes once the trial is over
            run_visible=self.job.settings.run_visible,
            run_twin=self.job.settings.run_twin,
            # A known change's grading reuses no setup state, as it never has.
            setup_states=None if self.agentless else self.worker.setup_states,
        )
        return graded(setup, changes)


def _run(
    job: TrialJob, worker: WorkerContext, scratch: TrialScratch, paths: TrialPaths, began: float
) -> TrialResult:
    protocol = get_protocol(job.protocol)
    agentless = not needs_workspace(protocol)
    phases.phase("setup")
    trial = _Trial(job, worker, scratch, paths, agentless=agentless)
    task, snapshot = job.task, trial.snapshot
    request: AgentRequest | None = None
    workspace: Path | None = None
    setup_seconds = 0.0
    if not agentless:
        workspace = trial.copy(1)
        paths.prompt.write_text(task.prompt, encoding="utf-8")
        scratch.prompt.write_text(task.prompt, encoding="utf-8")
        setup = trial.setup(1)
        if not setup.ok:
            return _setup_failed(job, worker, setup, snapshot, paths, began)
        setup_seconds = setup.seconds
        request = _agent_request(job, worker, trial, workspace)
    inputs = ProtocolInputs(
        task=task,
        variant=job.variant,
        harness=job.harness,
        snapshot=snapshot,
        prepared=request,
        new_workspace=trial.new_workspace,
        grade=trial.grade,
        measure=trial.measure,
        round_paths=trial.round_paths,
        round_scratch=trial.round_scratch,
        stop=worker.stop,
        checkpoint=_checkpointer(job, protocol.name, began, paths.root),
        resumed=_resumable(job, protocol.name),
        change=job.change,
    )
    outcome = protocol.run(inputs)
    if not outcome.rounds:
        raise StageFailed(f"protocol {protocol.name}", ValueError("it ran no round"))
    phases.phase("recording")
    if agentless:  # no agent ran: no transcript, no trajectory
        return _result(job, protocol.name, outcome, trial, setup_seconds, began, None)
    with stage("transcript recording"):
        for number, each in enumerate(outcome.rounds, start=1):
            trial.round_paths(number).transcript.write_text(model_json(each.agent.transcript))
    kept = workspace if worker.keep else None
    result = _result(job, protocol.name, outcome, trial, setup_seconds, began, kept)
    with stage("trajectory export"):
        counts = [len(each.agent.transcript.calls) for each in outcome.rounds]
        costs = ledger_costs(trial.paths.cost, counts)
        for number, each in enumerate(outcome.rounds, start=1):
            file = trial.round_paths(number).root / TRAJECTORY_FILE
            document = trajectory_json(
                result, each.agent.transcript, task.prompt, costs[number - 1]
            )
            file.write_text(document)
    return result


def _result(
    job: TrialJob,
    protocol: str,
    outcome: ProtocolOutcome,
    trial: _Trial,
    setup_seconds: float,
    began: float,
    workspace: Path | None,
) -> TrialResult:
    return trial_result(
        job,
        protocol,
        outcome,
        snapshot=trial.snapshot,
        sandbox=trial.worker.sandbox.name,
        setup_seconds=setup_seconds,
        elapsed=now() - began,
        cost_ledger=trial.paths.cost,
        workspace=workspace,
    )


def _setup_failed(
    job: TrialJob,
    worker: WorkerContext,
    setup: SetupOutcome,
    snapshot: Snapshot,
    paths: TrialPaths,
    began: float,
) -> TrialResult:
    """The trial when the task's setup failed in the agent's workspace: no protocol ran."""
    status: Status = "interrupted" if setup.stopped else "could_not_run"
    return job.identity.revised(
        base_commit=snapshot.commit,
        base_source=snapshot.source,
        sandbox=worker.sandbox.name,
        status=status,
        finished=utc_now(),
        seconds=Timing(setup=round(setup.seconds, 3), total=now() - began),
        rounds=(
            RoundRecord(
                status=status,
                agent=AgentSummary(error="setup failed in the agent's workspace"),
            ),
        ),
        cost=NO_MODEL,
        note=f"see {paths.root / 'setup.log'}",
    )


def _agent_request(
    job: TrialJob, worker: WorkerContext, trial: _Trial, workspace: Path
) -> AgentRequest:
    """Round 1's request, its workspace ready."""
    task, settings, scratch = job.task, job.settings, trial.scratch
    return AgentRequest(
        task=task,
        variant=job.variant,
        prompt=task.prompt,
        prompt_file=scratch.prompt,
        workspace=workspace,
        home=scratch.home,
        tmp=scratch.tmp,
        logs=trial.paths.root,
        timeout=settings.agent_timeout or task.spec.limits.agent_timeout,
        sandbox=trial.sandbox,
        network=settings.network,
        python=worker.python,
        stop=worker.stop,
        budget_usd=settings.budget_usd,
        readonly=trial.view.readonly,
        repetition=job.identity.repetition,
    )


def _checkpointer(
    job: TrialJob, protocol: str, began: float, files: Path
) -> Callable[[int, dict[str, Any]], None]:
    earlier = job.resume.elapsed if _resumable(job, protocol) is not None and job.resume else 0.0

    def checkpoint(rounds: int, state: dict[str, Any]) -> None:
        if job.on_round is not None:
            elapsed = round(earlier + now() - began, 3)
            job.on_round(
                RoundCheckpoint(protocol, job.task.fingerprint, rounds, state, elapsed, files)
            )

    return checkpoint


def _resumable(job: TrialJob, protocol: str) -> RoundCheckpoint | None:
    """The job's checkpoint, when it is this protocol's on this very task."""
    found = job.resume
    if found is None or (found.protocol, found.task_fingerprint) != (
        protocol,
        job.task.fingerprint,
    ):
        return None
    return found


def _named_where_recorded(result: TrialResult, artifacts: Path, job: TrialJob) -> TrialResult:
    """Messages written on the worker name its folder; they should name the trial folder."""
    folder = job.settings.record_folder
    if folder is None:
        return result
    staged, recorded = str(artifacts), str(folder)

    def moved(text: str | None) -> str | None:
        return text.replace(staged, recorded) if text else text

    rounds = tuple(
        each.model_copy(
            update={
                "note": moved(each.note),
                "grading": each.grading.model_copy(update={"error": moved(each.grading.error)})
                if each.grading is not None
                else None,
            }
        )
        for each in result.rounds
    )
    return result.revised(note=moved(result.note), rounds=rounds)


def _trial_sandbox(sandbox: Sandbox, task: Task) -> Sandbox:
    """The worker's sandbox with this task's limits, on its image's root when it names one."""
    from harnessdrive.environments.oci.task_image import task_image

    spec = task.spec.limits
    base = sandbox.settings.limits or Limits()
    if task.spec.environment is not None:
        sandbox = sandbox.with_image(task_image(task))
    return sandbox.with_limits(
        base.with_overrides(
            processes=spec.processes,
            memory_mb=spec.memory_mb,
            file_size_mb=spec.file_size_mb,
            disk_mb=spec.disk_mb,
        )
    )
