"""Base snapshots, built once per run and shared by every trial and grading that starts there.

Keyed by the starting files, not the task, so tasks of one project share one snapshot.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from harnessdrive.tasks.loading import Task
from harnessdrive.workspace.overlay import overlay_snapshot
from harnessdrive.workspace.snapshot import Snapshot, build_snapshot, source_key


class SnapshotCache:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._built: dict[str, Snapshot] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, task: Task) -> Snapshot:
        key = source_key(task.repo_path, task.spec.repo.ref)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._built:
                self._built[key] = build_snapshot(
                    task.repo_path, task.spec.repo.ref, self.root / key
                )
            return self._built[key]

    def overlaid(self, task: Task, key: str, files: Sequence[tuple[str, Path]]) -> Snapshot:
        """The task's snapshot with ``files`` laid over it, built once per ``key``."""
        base = self.get(task)
        full = f"{source_key(task.repo_path, task.spec.repo.ref)}-{key}"
        with self._guard:
            lock = self._locks.setdefault(full, threading.Lock())
        with lock:
            if full not in self._built:
                self._built[full] = overlay_snapshot(base, files, self.root / full)
            return self._built[full]
