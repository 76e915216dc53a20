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
import io
import shutil
import socket
import sys
import tarfile
import threading
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from harnessdrive.accounting.trial_cost import NO_MODEL
from harnessdrive.executors.task_bundle import unpack_task
from harnessdrive.store.results import AgentSummary, RoundRecord, TrialResult
from harnessdrive.store.store import utc_now
from harnessdrive.trial.job import JobResult, TrialJob, WorkerSettings
from harnessdrive.trial.worker import WorkerContext

POLL_SECONDS = 0.1
"""How often the waiting thread looks up, so Ray's cancel reaches it."""
_LOCK = threading.Lock()
_CURRENT: dict[WorkerSettings, WorkerContext] = {}
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


def harnessdrive_version() -> str:
    try:
        return version("harnessdrive")
    except PackageNotFoundError:
        return "unknown"


def worker_problem(job: TrialJob, settings: WorkerSettings, driver_version: str) -> str | None:
    """Why this host cannot run ``job`` as the driver asks (None when it can)."""
    here = harnessdrive_version()
    if here != driver_version:
        return f"harnessdrive {here} is installed here, the driver runs {driver_version}"
    if settings.sandbox == "bwrap":
        from harnessdrive.sandbox.bwrap import bwrap_problem

        problem = bwrap_problem()
        if problem is not None:
            return f"the bwrap sandbox cannot run here: {problem}"
    name = job.harness.name
    if name not in _INFO:
        info = job.harness.info()
        _INFO[name] = None if info.installed else (info.detail or f"{name} is not installed")
    return _INFO[name]


def run_shipped(
    job: TrialJob, archive: bytes, settings: WorkerSettings, driver_version: str
) -> Shipped:
    """Run ``job`` here; ``archive`` holds its task's files (executors/task_bundle.py)."""
    from harnessdrive.trial.core import run_job

    host = socket.gethostname()
    problem = worker_problem(job, settings, driver_version)
    if problem is not None:
        return Shipped(_refused(job, host, problem), b"", host, refused=problem)
    worker = _context(settings)
    key = hashlib.sha256(job.task.fingerprint.encode()).hexdigest()[:16]
    task = unpack_task(job.task, archive, worker.paths.root / "tasks" / key)
    finished: list[JobResult] = []
    failed: list[BaseException] = []
    ended = threading.Event()

    def run() -> None:
        try:
            finished.append(run_job(dataclasses.replace(job, task=task), worker))
        except BaseException as exc:  # a bug below the trial boundary
            failed.append(exc)
        finally:
            ended.set()

    # The trial runs in a thread of its own so that Ray's cancel, a KeyboardInterrupt in this
    # thread, can stop it as a stopped run does. An event, not Thread.join, is awaited: an
    # interrupted join can leave the thread looking finished while it runs.
    threading.Thread(target=run, name="harnessdrive-trial", daemon=True).start()
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
            _forget(settings)  # its stop token stays set: the next trial gets a new context
    return Shipped(done.result, files, host)


def _forget(settings: WorkerSettings) -> None:
    with _LOCK:
        context = _CURRENT.pop(settings, None)
    if context is not None:
        context.close()


def pack_folder(folder: Path) -> bytes:
    """``folder``'s tree as a tar archive, links as links (the receiver refuses them)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for entry in sorted(folder.iterdir()):
            archive.add(entry, arcname=entry.name)
    return buffer.getvalue()


def _context(settings: WorkerSettings) -> WorkerContext:
    with _LOCK:
        found = _CURRENT.get(settings)
        if found is not None:
            return found
        for old in _CURRENT.values():
            old.close()  # another run's: one trial at a time runs in this process
        _CURRENT.clear()
        local = _on_this_host(settings)
        context = WorkerContext(local)
        _CURRENT[settings] = context
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
