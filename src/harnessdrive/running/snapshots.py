"""Each task's base snapshot, built once per run and shared by its trials and gradings."""

from __future__ import annotations

import threading
from pathlib import Path

from harnessdrive.store.paths import safe_name
from harnessdrive.tasks.loading import Task
from harnessdrive.workspace.snapshot import Snapshot, build_snapshot


class SnapshotCache:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._built: dict[str, Snapshot] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, task: Task) -> Snapshot:
        key = f"{safe_name(task.id)}-{task.fingerprint}"
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._built:
                self._built[key] = build_snapshot(
                    task.repo_path, task.spec.repo.ref, self.root / key
                )
            return self._built[key]
