"""The Ray executor: each trial a Ray task on some worker of a cluster (``harnessdrive[ray]``).

The driver keeps everything it owns on one machine: the schedule (resume, the spend cap, the
concurrency limits) decides what starts, and only the driver writes the results store. A
trial goes to the cluster as a task of :func:`~harnessdrive.executors.ray_worker.run_shipped`
with its task's files, packed once per task and put in Ray's object store; the worker checks
that it can run it, builds the workspace from those files, runs agent and grading in its own
sandbox, and returns the result with the trial's files as a tar archive, which is unpacked
here into a folder the recorder adopts.

Ray's own task retries are off: a worker lost mid-trial comes back as an error, and the trial
is submitted again (to whichever worker Ray picks) with the loss kept as a ``worker_lost``
retry event; after :data:`LOST_TRIES` losses it is recorded as a failure of the machinery.
Ray is imported only when this executor is created.
"""

from __future__ import annotations

import io
import logging
import re
import shutil
import tarfile
import tempfile
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harnessdrive.errors import HarnessdriveError, UserError
from harnessdrive.executors.ray_worker import Shipped, harnessdrive_version, run_shipped
from harnessdrive.executors.task_bundle import pack_task
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.sandbox.scratch import make_scratch_root
from harnessdrive.store.results import AgentSummary, RetryEvent, RoundRecord, TrialResult
from harnessdrive.store.store import utc_now
from harnessdrive.trial.job import JobResult, TrialJob, WorkerSettings

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
LOST_TRIES = 3
"""Tries of a trial whose worker is lost each time before it counts as a machinery failure."""
POLL_SECONDS = 0.2
STOP_GRACE_SECONDS = 30.0
"""How long a stopped trial has to hand back its interrupted result before its worker process
is killed."""


@dataclass
class _InFlight:
    job: TrialJob
    future: Future[JobResult]
    lost: list[RetryEvent] = field(default_factory=list)


class RayExecutor:
    """Trials as Ray tasks; see :class:`harnessdrive.executors.interface.Executor`."""

    name = "ray"

    def __init__(
        self, settings: WorkerSettings, *, driver_version: str | None = None, cpus: float = 1
    ) -> None:
        try:
            import ray
        except ImportError:
            raise UserError("the ray executor needs Ray: pip install 'harnessdrive[ray]'") from None
        self._ray: Any = ray
        # "auto" is decided here, once, so every worker runs the same sandbox (or refuses).
        kind = get_sandbox(settings.sandbox).name
        self._sandbox = kind
        self._settings = replace(settings, sandbox="bwrap" if kind == "bwrap" else "none")
        self._version = driver_version or harnessdrive_version()
        self._owns = not ray.is_initialized()
        if self._owns:
            try:
                ray.init(
                    address=settings.address,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.WARNING,
                )
            except (ConnectionError, ValueError, RuntimeError) as exc:
                where = settings.address or "a new local cluster"
                raise UserError(f"cannot join the Ray cluster at {where}: {exc}") from None
        self._remote = ray.remote(num_cpus=cpus, max_retries=0)(run_shipped)
        self._files = make_scratch_root(settings.scratch_prefix)
        self._archives: dict[str, Any] = {}
        self._in_flight: dict[Any, _InFlight] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._wake = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._collect, name="harnessdrive-ray", daemon=True)
        self._thread.start()

    @property
    def sandbox(self) -> str:
        return self._sandbox

    @property
    def kept(self) -> Path | None:
        return None  # kept workspaces stay on the workers' disks

    def submit(self, job: TrialJob, *, priority: tuple[int, ...] = ()) -> Future[JobResult]:
        # Ray starts tasks in the order they come; the driver submits in priority order.
        future: Future[JobResult] = Future()
        with self._lock:
            if self._closed:
                raise HarnessdriveError(f"the {self.name} executor is closed; {job.key} not run")
        self._send(_InFlight(job, future))
        return future

    def stop(self) -> None:
        # Only an event: this may run in a signal handler. The collecting thread cancels.
        self._stopping.set()

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._wake.set()
        self._thread.join()
        shutil.rmtree(self._files, ignore_errors=True)
        if self._owns:
            self._ray.shutdown()

    def _send(self, flight: _InFlight) -> None:
        job = flight.job
        archive = self._archives.get(job.task.fingerprint)
        if archive is None:
            archive = self._ray.put(pack_task(job.task))
            self._archives[job.task.fingerprint] = archive
        ref = self._remote.remote(job, archive, self._settings, self._version)
        with self._lock:
            self._in_flight[ref] = flight
        self._wake.set()

    def _collect(self) -> None:
        ray = self._ray
        cancelled: set[Any] = set()
        killed: set[Any] = set()
        stopped_at: float | None = None
        while True:
            with self._lock:
                refs = list(self._in_flight)
                if not refs and self._closed:
                    return
            if self._stopping.is_set():
                stopped_at = stopped_at or time.monotonic()
                forced = time.monotonic() - stopped_at > STOP_GRACE_SECONDS
                for ref in refs:
                    if ref not in cancelled or (forced and ref not in killed):
                        # First as a stop the trial answers (interrupted, with its files);
                        # a worker that does not answer in time loses its process.
                        ray.cancel(ref, force=forced)
                        (killed if forced else cancelled).add(ref)
            if not refs:
                self._wake.wait(POLL_SECONDS)
                self._wake.clear()
                continue
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=POLL_SECONDS)
            for ref in ready:
                with self._lock:
                    flight = self._in_flight.pop(ref)
                self._settle(flight, ref)

    def _settle(self, flight: _InFlight, ref: Any) -> None:
        exceptions = self._ray.exceptions
        job = flight.job
        try:
            shipped: Shipped = self._ray.get(ref)
        except exceptions.TaskCancelledError:
            self._answer(flight, _interrupted(job))
            return
        except exceptions.RayTaskError as exc:  # raised in the worker: not a lost worker
            if self._stopping.is_set():  # the stop reached it outside the trial
                self._answer(flight, _interrupted(job))
            else:
                self._answer(flight, _machinery_failure(job, flight.lost, _cause(exc)))
            return
        except exceptions.RayError as exc:  # the worker process or its node is gone
            if self._stopping.is_set():
                self._answer(flight, _interrupted(job))
                return
            flight.lost.append(
                RetryEvent(reason="worker_lost", detail=_first_line(exc), at=utc_now())
            )
            if len(flight.lost) < LOST_TRIES:
                self._send(flight)
            else:
                self._answer(flight, _machinery_failure(job, flight.lost))
            return
        result = shipped.result
        if flight.lost:
            result = result.revised(retries=(*flight.lost, *result.retries))
        flight.future.set_result(JobResult(result, self._unpack(shipped.files)))

    def _answer(self, flight: _InFlight, result: TrialResult) -> None:
        if flight.lost:
            result = result.revised(retries=(*flight.lost, *result.retries))
        flight.future.set_result(JobResult(result, self._unpack(b"")))

    def _unpack(self, files: bytes) -> Path:
        folder = Path(tempfile.mkdtemp(dir=self._files))
        if files:
            # What a worker sends sat next to an agent's work: no links out, no devices.
            with tarfile.open(fileobj=io.BytesIO(files), mode="r") as archive:
                archive.extractall(folder, filter="data")
        return folder


def _cause(exc: Any) -> str:
    """What went wrong in the worker (a RayTaskError's first line only names the task)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return f"{type(cause).__name__}: {_first_line(cause)}"
    return _first_line(exc)


def _first_line(exc: BaseException) -> str:
    text = _ANSI.sub("", str(exc)).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def _interrupted(job: TrialJob) -> TrialResult:
    return job.identity.revised(finished=utc_now())


def _machinery_failure(
    job: TrialJob, lost: list[RetryEvent], error: str | None = None
) -> TrialResult:
    error = error or f"the Ray worker running it was lost {len(lost)} times"
    return job.identity.revised(
        status="could_not_run",
        finished=utc_now(),
        rounds=(RoundRecord(status="could_not_run", agent=AgentSummary(error=error)),),
        note=f"an infrastructure failure ({error}); not counted against the harness",
    )
