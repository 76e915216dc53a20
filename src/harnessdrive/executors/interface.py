"""The executor seam: a prepared trial goes in, its result and its files come back.

The driver (running/run.py) decides what runs next and records what comes back; an executor
decides where a trial runs. It never touches the results store: every :class:`JobResult` names
a folder of files that the receiver moves into place. The local thread pool
(executors/local.py) is the first executor; others register through the
``harnessdrive_executors`` hook with an :class:`ExecutorEntry` and are chosen by name.

A :class:`TrialJob` holds no live object of the driver (no store, no lock, no thread), so an
executor may ship it to another process or machine.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from harnessdrive.trial.job import JobResult, TrialJob, WorkerSettings

DEFAULT_EXECUTOR = "local"


class Executor(Protocol):
    """Runs jobs somewhere and hands back their results; never writes the results store."""

    @property
    def name(self) -> str:
        """The registered name (``local``)."""
        ...

    @property
    def sandbox(self) -> str:
        """The sandbox its trials run in (``none``, ``bwrap``), as every result records."""
        ...

    @property
    def kept(self) -> Path | None:
        """Once closed with ``keep``: the folder that holds the kept workspaces."""
        ...

    def submit(self, job: TrialJob, *, priority: tuple[int, ...] = ()) -> Future[JobResult]:
        """Queue ``job``. Among jobs waiting for a free worker, the lowest ``priority`` starts
        first, then the earliest submitted. The future never fails: anything unexpected in the
        trial is in its result (an infrastructure failure of that trial)."""
        ...

    def stop(self) -> None:
        """End every trial now: running ones come back ``interrupted``, queued ones come back
        ``interrupted`` without starting. Safe to call from a signal handler, and twice."""
        ...

    def cancel(self, future: Future[JobResult]) -> None:
        """End one submitted job: a waiting one never starts (its future is cancelled); a
        running one is stopped as :meth:`stop` stops every job (its processes killed, its
        scratch removed) and comes back ``interrupted``. A finished one is left alone."""
        ...

    def close(self) -> None:
        """Wait for every submitted job, then release the workers and their scratch folders.
        Submitting afterwards is an error."""
        ...


@dataclass(frozen=True)
class ExecutorEntry:
    """What the ``harnessdrive_executors`` hook returns: a name and how to build one."""

    name: str
    create: Callable[[WorkerSettings], Executor]
    description: str = ""
