"""What every worker process of one node shares for one run, and its removal at the end.

A node runs several worker processes (one per slot), and Ray may start new ones at any time.
Each task's unpacked files, its base snapshots and its setup states are the same for all of
them, so they live once per node and run, in ``<temp>/harnessdrive-node-<run>/``, each built
under a file lock by the first process that needs it and read back by the others: setup runs
once per task and dependency state per node, not once per process. Each process records the
scratch root it made there too, so the end of the run (:func:`clean_node`, run on every node)
removes all of it, whatever process made it, and a crashed process's folders go with it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from harnessdrive.executors.task_bundle import unpack_task
from harnessdrive.sandbox.scratch import PREFIX, sweep_stale_scratch
from harnessdrive.tasks.loading import Task
from harnessdrive.trial.snapshots import SnapshotCache
from harnessdrive.workspace.setup_reuse import RunSetup, SetupState, SetupStates, dependency_key
from harnessdrive.workspace.snapshot import Snapshot, source_key

_SAVED = "saved.pickle"


def node_folder(run: str, node: str) -> Path:
    """The folder node ``node`` keeps for run ``run`` (a token the driver made); named by the
    node too, so nodes that share a disk (or a machine) keep their own."""
    return Path(tempfile.gettempdir()) / f"{PREFIX}node-{run}-{node[:12]}"


@contextlib.contextmanager
def node_lock(path: Path) -> Iterator[None]:
    """Held by one process of the node at a time (and released if it dies)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _saved(folder: Path) -> object:
    with (folder / _SAVED).open("rb") as handle:
        return pickle.load(handle)  # written by this node's own processes, never received


def _save(folder: Path, value: object) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    staged = folder / f"{_SAVED}.{os.getpid()}"
    staged.write_bytes(pickle.dumps(value))
    os.replace(staged, folder / _SAVED)


def node_task(folder: Path, task: Task, archive: bytes) -> Task:
    """``task`` unpacked once per node into ``folder``."""
    into = folder / "tasks" / source_key(task.folder, None)[:16] / task.fingerprint[:16]
    with node_lock(into.with_suffix(".lock")):
        return unpack_task(task, archive, into)


class NodeSnapshots(SnapshotCache):
    """Base snapshots built once per node: the first process builds, the others read back."""

    def get(self, task: Task) -> Snapshot:
        key = source_key(task.repo_path, task.spec.repo.ref)
        return self._shared(key, lambda: super(NodeSnapshots, self).get(task))

    def overlaid(self, task: Task, key: str, files: Sequence[tuple[str, Path]]) -> Snapshot:
        full = f"{source_key(task.repo_path, task.spec.repo.ref)}-{key}"
        return self._shared(full, lambda: super(NodeSnapshots, self).overlaid(task, key, files))

    def _shared(self, key: str, build: Callable[[], Snapshot]) -> Snapshot:
        known = self._built.get(key)
        if known is not None:
            return known
        record = self.root / f"{key}.saved"
        with node_lock(self.root / f"{key}.lock"):
            if (record / _SAVED).exists():
                found = _saved(record)
                assert isinstance(found, Snapshot)
                self._built[key] = found
                return found
            shutil.rmtree(self.root / key, ignore_errors=True)  # a process died building it
            made = build()
            _save(record, made)
            return made


class NodeSetupStates(SetupStates):
    """Setup states built once per node and dependency state."""

    def get(self, task: Task, snapshot: Snapshot, python: str, run: RunSetup) -> SetupState | None:
        key = dependency_key(task, snapshot, python)
        if key in self._states:
            return self._states[key]
        record = self.root / f"{key}.saved"
        with node_lock(self.root / f"{key}.lock"):
            if (record / _SAVED).exists():
                found = _saved(record)
                assert found is None or isinstance(found, SetupState)
                self._states[key] = found
                return found
            shutil.rmtree(self.root / key, ignore_errors=True)  # a process died building it
            made = super().get(task, snapshot, python, run)
            _save(record, made)
            return made


def register_root(folder: Path, root: Path) -> None:
    """Note a worker process's scratch root, so the end of the run removes it."""
    roots = folder / "roots"
    roots.mkdir(parents=True, exist_ok=True)
    (roots / f"{os.getpid()}-{root.name}").write_text(str(root))


def clean_node(run: str) -> list[str]:
    """Run on each node when the run ends: remove every scratch root its worker processes made
    for ``run`` and the node's shared folder, and sweep roots of processes that died."""
    from harnessdrive.sandbox.tree import kill_strays

    removed: list[str] = []
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}node-{run}-*"):
        roots = folder / "roots"
        if roots.is_dir():
            for entry in roots.iterdir():
                root = Path(entry.read_text())
                if root.name.startswith(PREFIX) and root.is_dir():
                    kill_strays(str(root))
                    shutil.rmtree(root, ignore_errors=True)
                    removed.append(str(root))
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(str(folder))
    removed += [str(p) for p in sweep_stale_scratch()]
    return removed
