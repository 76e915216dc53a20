"""harnessdrive's own executors, registered like any plugin's."""

from __future__ import annotations

from harnessdrive.executors.base import ExecutorEntry
from harnessdrive.executors.local import create_local
from harnessdrive.plugins.hookspecs import hookimpl


@hookimpl
def harnessdrive_executors() -> list[ExecutorEntry]:
    return [
        ExecutorEntry(
            name="local",
            create=create_local,
            description="a pool of --jobs threads on this machine",
        )
    ]
