"""Validation's test runs as trial jobs on the one executor, the oldest commit's first.

Each run grades a known change (none, or the gold patch) on a commit's parent: a job of the
``known-change`` protocol (protocols/known_change.py) on the executor's workers, never a
thread of mining's own. The executor starts the waiting job of lowest priority first; a run's
priority is its rank, so a free worker goes to the oldest commit's earliest waiting step, and
commits finish in the order a one-at-a-time run would check them. Once the last commit that
is needed is known, the runs of later commits are withdrawn (a waiting one never starts, a
running one is ended through the executor: its test processes killed, its copy removed), and
no new one starts.
"""

from __future__ import annotations

import threading
from concurrent.futures import CancelledError, Future
from pathlib import Path

from harnessdrive.executors.interface import Executor
from harnessdrive.mining.slots import NotNeeded, Rank
from harnessdrive.protocols.base import GivenChange
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import Task
from harnessdrive.trial.job import JobResult, TrialJob, TrialSettings
from harnessdrive.trial.standalone import known_change_job, received

MINED_SUITE = "mined"
"""The suite a run's job names (its result goes back to the check, never to a store)."""


def grading_run(key: str, task: Task, change: GivenChange, logs: Path) -> TrialJob:
    """The job of one test run of ``task`` on ``change``; its logs are to be kept in ``logs``.

    No run has a twin (grading/twin_run.py): the change is the commit's own, not a forger's.
    Whether the commit's fix fails the twins of its tests, as every honest solution must, is
    what ``check`` finds, where the reference is graded as any agent is, twin and all."""
    settings = TrialSettings(network="none", run_visible=False, record_folder=logs, run_twin=False)
    return known_change_job(task, change, key=key, suite=MINED_SUITE, settings=settings)


class RunQueue:
    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self._last: int | None = None
        self._queued: dict[int, set[Future[JobResult]]] = {}
        self._withdrawn: set[Future[JobResult]] = set()
        self._guard = threading.Lock()

    def submit(self, job: TrialJob, rank: Rank) -> Future[JobResult]:
        """Queue ``job`` at ``rank``; :class:`NotNeeded` for a commit past the cut-off."""
        place = rank[0]
        with self._guard:
            if self._last is not None and place > self._last:
                raise NotNeeded
            future = self.executor.submit(job, priority=rank)
            self._queued.setdefault(place, set()).add(future)
        future.add_done_callback(lambda done: self._forget(place, done))
        return future

    def close_after(self, place: int) -> None:
        """Withdraw the runs of every commit after ``place``, running or waiting; refuse new
        ones. A run ended this way comes back interrupted, and :func:`taken` says NotNeeded."""
        with self._guard:
            self._last = place if self._last is None else min(self._last, place)
            withdrawn = [f for p, fs in self._queued.items() if p > self._last for f in fs]
            self._withdrawn.update(withdrawn)
        for future in withdrawn:
            self.executor.cancel(future)

    def withdrawn(self, future: Future[JobResult]) -> bool:
        """Whether :meth:`close_after` ended or withdrew this run."""
        with self._guard:
            return future in self._withdrawn

    def stop(self) -> None:
        """End every run: running ones are ended, waiting ones come back interrupted."""
        self.executor.stop()

    def _forget(self, place: int, future: Future[JobResult]) -> None:
        with self._guard:
            self._queued.get(place, set()).discard(future)


def taken(future: Future[JobResult], logs: Path) -> TrialResult:
    """A run's result once its files are in ``logs``; :class:`NotNeeded` when withdrawn."""
    try:
        done = future.result()
    except CancelledError:
        raise NotNeeded from None
    return received(done, logs)
