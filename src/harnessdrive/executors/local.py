"""The local executor: a pool of threads on this machine, sharing one worker context.

Jobs wait in a priority queue: when a thread is free, the job with the lowest priority tuple
starts, the earliest submitted among equals. Each thread runs the trial core
(:func:`harnessdrive.trial.core.run_job`); the trial boundary there turns anything
unexpected into that trial's infrastructure failure, and what escapes even that (a MemoryError)
is turned into one here: a thread never dies and a future always gets its trial's result.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from harnessdrive.errors import HarnessdriveError
from harnessdrive.sandbox.process import StopToken
from harnessdrive.trial.job import JobResult, TrialJob, WorkerSettings
from harnessdrive.trial.worker import WorkerContext

CLOSE_GRACE_SECONDS = 5.0
"""How long closing a stopped executor waits for its threads before it gives up on them."""

JobRunner = Callable[[TrialJob, WorkerContext], JobResult]


@dataclass(order=True)
class _Queued:
    priority: tuple[int, ...]
    sequence: int
    job: TrialJob = field(compare=False)
    future: Future[JobResult] = field(compare=False)


class LocalExecutor:
    """``jobs`` threads on this machine; see :class:`harnessdrive.executors.interface.Executor`."""

    name = "local"

    def __init__(self, settings: WorkerSettings, run: JobRunner | None = None) -> None:
        if run is None:
            from harnessdrive.trial.core import run_job  # the core imports the seam

            run = run_job
        self._run = run
        self.worker = WorkerContext(settings)
        self._queue: list[_Queued] = []
        self._sequence = itertools.count()
        self._changed = threading.Condition()
        self._closed = False
        self._running: dict[Future[JobResult], StopToken] = {}
        """Each started job's own stop token (:meth:`cancel` ends that job alone)."""
        self._running_guard = threading.Lock()
        self._threads = [
            threading.Thread(target=self._work, name=f"harnessdrive-trial-{n}", daemon=True)
            for n in range(max(settings.jobs, 1))
        ]
        for thread in self._threads:
            thread.start()

    @property
    def sandbox(self) -> str:
        return self.worker.sandbox.name

    @property
    def kept(self) -> Path | None:
        return self.worker.kept

    def submit(self, job: TrialJob, *, priority: tuple[int, ...] = ()) -> Future[JobResult]:
        future: Future[JobResult] = Future()
        with self._changed:
            if self._closed:
                raise HarnessdriveError(f"the {self.name} executor is closed; {job.key} not run")
            heapq.heappush(self._queue, _Queued(priority, next(self._sequence), job, future))
            self._changed.notify()
        return future

    def stop(self) -> None:
        # Only the stop token's event is set, never the queue's lock taken: this may run in a
        # signal handler that interrupts a thread holding that lock. Queued jobs still run, and
        # the trial core returns them interrupted at once.
        self.worker.stop.stop()

    def cancel(self, future: Future[JobResult]) -> None:
        if future.cancel():
            return  # it was waiting: it never starts
        with self._running_guard:
            token = self._running.get(future)
        if token is not None:
            token.stop()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        # Once stopped, a thread stuck below the trial core is not waited for forever: it is
        # a daemon, and the next run sweeps the scratch root it may still use.
        deadline = time.monotonic() + CLOSE_GRACE_SECONDS if self.worker.stop.stopped else None
        for thread in self._threads:
            thread.join(None if deadline is None else max(deadline - time.monotonic(), 0.0))
        if not any(thread.is_alive() for thread in self._threads):
            self.worker.close()

    def _work(self) -> None:
        while True:
            try:
                queued = self._next()
                if queued is None:
                    return  # closed, and nothing left to run
                # The job's token is known before it runs, so a cancel that finds the job
                # running always finds its token.
                token = self.worker.stop.child()
                with self._running_guard:
                    self._running[queued.future] = token
                try:
                    if queued.future.set_running_or_notify_cancel():
                        self._settle(queued, token)
                finally:
                    with self._running_guard:
                        self._running.pop(queued.future, None)
            except BaseException:  # a thread never dies: the next job still runs
                continue

    def _next(self) -> _Queued | None:
        with self._changed:
            while not self._queue and not self._closed:
                self._changed.wait()
            return heapq.heappop(self._queue) if self._queue else None

    def _settle(self, queued: _Queued, stop: StopToken) -> None:
        """Run ``queued`` and give its future a result, whatever escapes the trial core."""
        try:
            queued.future.set_result(self._run(queued.job, self.worker.for_job(stop)))
            return
        except BaseException as exc:  # out of memory, or a bug below the trial boundary
            failure = exc.with_traceback(None)  # the frames may hold what filled the memory
        from harnessdrive.trial.core import failed_job

        try:
            queued.future.set_result(failed_job(queued.job, self.worker, failure))
        except BaseException:
            with contextlib.suppress(BaseException):
                queued.future.set_exception(failure)  # the driver records it all the same


def create_local(settings: WorkerSettings) -> LocalExecutor:
    return LocalExecutor(settings)
