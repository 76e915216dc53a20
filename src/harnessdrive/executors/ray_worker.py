"""One trial on a Ray worker: check the host, unpack the task, run the trial core, pack the files.

This module never imports Ray: Ray calls :func:`run_shipped` in a worker process (one trial at
a time per process) and carries its arguments and its :class:`Shipped` answer. Ray's cancel
arrives as KeyboardInterrupt: the trial is then stopped like any stopped trial (its processes
ended, its result ``interrupted``) and still handed back. The worker
process keeps one :class:`WorkerContext` (sandbox, scratch root, snapshot cache) for the run
it last served; a trial of another run replaces it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import socket
import sys
import threading
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from harnessdrive.accounting.trial_cost import NO_MODEL
from harnessdrive.executors.node_cache import (
    NodeSetupStates,
    NodeSnapshots,
    node_folder,
    node_task,
    register_root,
)
from harnessdrive.executors.ray_relay import (
    RelayedPhases,
    RelayedRounds,
    announce,
    pack_folder,
    relayed_calls,
    this_node,
    unpack_into,
)
from harnessdrive.executors.task_bundle import unpack_task
from harnessdrive.harnesses.base import Harness
from harnessdrive.store.results import AgentSummary, RoundRecord, TrialResult
from harnessdrive.store.store import utc_now
from harnessdrive.trial.job import JobResult, TrialJob, WorkerSettings
from harnessdrive.trial.worker import WorkerContext

POLL_SECONDS = 0.1
"""How often the waiting thread looks up, so Ray's cancel reaches it."""
_LOCK = threading.Lock()
_CURRENT: dict[tuple[WorkerSettings, str], WorkerContext] = {}
_INFO: dict[str, str | None] = {}
"""Per harness name: why it cannot run on this host (None: it can). Asked once per process."""


@dataclass(frozen=True)
class Shipped:
    """What a worker hands back: the result, and its files as a tar archive."""

    result: TrialResult
    files: bytes
    host: str
    refused: str | None = None
    """Why this worker refused the trial (a missing requirement); nothing ran."""
    node_id: str = ""
    """The Ray node it ran on."""


def harnessdrive_version() -> str:
    try:
        return version("harnessdrive")
    except PackageNotFoundError:
        return "unknown"


def worker_problem(harness: Harness, settings: WorkerSettings, driver_version: str) -> str | None:
    """Why this host cannot run ``harness``'s trials as the driver asks (None when it can)."""
    here = harnessdrive_version()
    if here != driver_version:
        return f"harnessdrive {here} is installed here, the driver runs {driver_version}"
    if settings.sandbox == "bwrap":
        from harnessdrive.sandbox.bwrap import bwrap_problem

        problem = bwrap_problem()
        if problem is not None:
            return f"the bwrap sandbox cannot run here: {problem}"
    name = harness.name
    if name not in _INFO:
        info = harness.info()
        # An agent CLI's detail says what it supports; why it is missing is in ``found``.
        reason = info.found or info.detail
        _INFO[name] = (
            None if info.installed else f"{name} cannot run here: {reason or 'not installed'}"
        )
    return _INFO[name]


def run_shipped(
    job: TrialJob,
    archive: bytes,
    settings: WorkerSettings,
    driver_version: str,
    relay: Any = None,
    attempt: int = 0,
    resume_files: bytes = b"",
    run: str = "",
    phases: bool = False,
) -> Shipped:
    """Run ``job`` here; ``archive`` holds its task's files (executors/task_bundle.py),
    ``resume_files`` its checkpoint's files. With a ``relay``, round checkpoints and the
    proxy's calls go to the driver as they happen (executors/ray_relay.py). ``run`` names the
    run's folder on this node, shared by its worker processes (executors/node_cache.py).
    With ``phases``, what the trial is doing goes to the relay too (protocols/phases.py)."""
    from harnessdrive.trial.core import run_job

    host = socket.gethostname()
    node = this_node() if relay is not None else ""
    problem = worker_problem(job.harness, settings, driver_version)
    if problem is not None:
        return Shipped(_refused(job, host, problem), b"", host, refused=problem, node_id=node)
    if relay is not None:
        announce(relay, job.key, attempt, node)
    worker = _context(settings, run, node)
    if run and node:
        task = node_task(node_folder(run, node), job.task, archive)
    else:
        key = hashlib.sha256(job.task.fingerprint.encode()).hexdigest()[:16]
        task = unpack_task(job.task, archive, worker.paths.root / "tasks" / key)
    job = dataclasses.replace(job, task=task)
    if relay is not None:
        job = dataclasses.replace(
            job,
            on_round=RelayedRounds(relay, job.key, attempt),
            on_phase=RelayedPhases(relay, job.key, attempt) if phases else None,
        )
    if job.resume is not None and resume_files:
        kept = unpack_into(resume_files, worker.paths.new_artifacts() / "resumed")
        job = dataclasses.replace(job, resume=dataclasses.replace(job.resume, files=kept))
    finished: list[JobResult] = []
    failed: list[BaseException] = []
    ended = threading.Event()

    def work() -> None:
        try:
            if relay is None:
                finished.append(run_job(job, worker))
            else:
                with relayed_calls(relay, job.key, attempt):
                    finished.append(run_job(job, worker))
        except BaseException as exc:  # a bug below the trial boundary
            failed.append(exc)
        finally:
            ended.set()

    # The trial runs in a thread of its own so that Ray's cancel, a KeyboardInterrupt in this
    # thread, can stop it as a stopped run does. An event, not Thread.join, is awaited: an
    # interrupted join can leave the thread looking finished while it runs.
    threading.Thread(target=work, name="harnessdrive-trial", daemon=True).start()
    stopped = False
    while not ended.is_set():
        try:
            ended.wait(POLL_SECONDS)
        except KeyboardInterrupt:  # Ray's cancel, perhaps more than once
            stopped = True
            worker.stop.stop()
    try:
        if not finished:
            raise RuntimeError(f"the trial core ended without a result: {failed!r}")
        done = finished[0]
        try:
            files = pack_folder(done.artifacts)
        finally:
            shutil.rmtree(done.artifacts, ignore_errors=True)
    finally:
        if stopped:
            _forget(settings, run)  # its stop token stays set: the next trial gets a new context
    return Shipped(done.result, files, host, node_id=node)


def _forget(settings: WorkerSettings, run: str) -> None:
    with _LOCK:
        context = _CURRENT.pop((settings, run), None)
    if context is not None:
        context.close()


def _context(settings: WorkerSettings, run: str, node: str) -> WorkerContext:
    with _LOCK:
        found = _CURRENT.get((settings, run))
        if found is not None and found.paths.root.is_dir():
            return found
        for old in _CURRENT.values():
            old.close()  # another run's: one trial at a time runs in this process
        _CURRENT.clear()
        local = _on_this_host(settings)
        context = WorkerContext(local)
        if run and node:  # what every process of this node shares for the run
            shared = node_folder(run, node)
            register_root(shared, context.paths.root)
            context.snapshots = NodeSnapshots(shared / "snapshots")
            context.setup_states = NodeSetupStates(shared / "setup-states")
        _CURRENT[(settings, run)] = context
        return context


def _on_this_host(settings: WorkerSettings) -> WorkerSettings:
    """The driver's settings, with what this host lacks of its paths left out."""
    python = settings.python if Path(settings.python).exists() else sys.executable
    return dataclasses.replace(
        settings,
        hidden=tuple(p for p in settings.hidden if p.exists()),
        private=tuple(p for p in settings.private if p.exists()),
        shown=tuple(p for p in settings.shown if p.exists()),
        python=python,
    )


def _refused(job: TrialJob, host: str, problem: str) -> TrialResult:
    hint = f"worker {host} refused it: {problem}; install what it lacks on every worker"
    return job.identity.revised(
        status="could_not_run",
        finished=utc_now(),
        rounds=(RoundRecord(status="could_not_run", agent=AgentSummary(error=problem, hint=hint)),),
        cost=NO_MODEL,
        note=f"refused by a worker without a requirement ({problem}); nothing ran",
    )
