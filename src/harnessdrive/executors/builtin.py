"""harnessdrive's own executors, registered like any plugin's."""

from __future__ import annotations

from harnessdrive.executors.interface import Executor, ExecutorEntry
from harnessdrive.executors.local import create_local
from harnessdrive.plugins.hookspecs import hookimpl
from harnessdrive.trial.job import WorkerSettings


def create_ray(settings: WorkerSettings) -> Executor:
    from harnessdrive.executors.ray_executor import RayExecutor  # imports Ray only when used

    return RayExecutor(settings)


@hookimpl
def harnessdrive_executors() -> list[ExecutorEntry]:
    return [
        ExecutorEntry(
            name="local",
            create=create_local,
            description="a pool of --jobs threads on this machine",
        ),
        ExecutorEntry(
            name="ray",
            create=create_ray,
            description="Ray tasks on a cluster (--address); needs harnessdrive[ray]",
        ),
    ]
