"""A task's setup run once per dependency state, its result copied into every fresh copy.

Setup (installing dependencies) costs seconds to minutes and gives the same result for every
copy that starts from the same files, so it runs once, in a prototype copy of its own, and
what it added is copied into each agent workspace and grading copy of the run:

- The dependency state is the setup commands, their network and timeout, the base tree (it
  holds the dependency manifests), the shared folders and the interpreter. A grading copy whose
  change touches a dependency file is in a state of its own: its setup runs there, as before.
- The state lives in the run's scratch folder (``setup-states/<key>/``) and goes with it.
- Only additions are reused. A setup that changed or deleted a file of the base, wrote to its
  HOME (anything but ``.cache`` and ``.npm``), or left a binary file that names the prototype's
  path runs in every copy instead. Text files that name that path (scripts, ``.pth`` files,
  ``pyvenv.cfg``) name the copy instead, and so do links. Bytecode is left out: it is compiled
  again.
- ``setup.reuse = false`` opts a task out: a setup whose result depends on the project's own
  files (a non-editable install, say) must run in each copy.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.sandbox.clock import now
from harnessdrive.tasks.loading import Task
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.setup import SetupOutcome
from harnessdrive.workspace.snapshot import Snapshot

RunSetup = Callable[[Path, Path, Path], SetupOutcome]
"""Runs the task's setup in a copy: ``(copy, home, log)`` -> outcome."""

_SKIPPED_DIRS = frozenset({"__pycache__"})
# What package managers keep in HOME that never changes what a copy holds.
_CACHE_HOMES = frozenset({".cache", ".npm"})


@dataclass(frozen=True)
class SetupState:
    """What one setup run added to its prototype copy, ready to be copied elsewhere."""

    prototype: Path
    dirs: tuple[str, ...]
    files: tuple[str, ...]
    rewrite: frozenset[str]
    """Files and links among ``files`` that name the prototype's path."""
    outcome: SetupOutcome
    log: Path


class SetupStates:
    """The reusable setup states of one run, each built at most once (thread-safe)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.built = 0
        """Setup runs in a prototype (one per dependency state)."""
        self.reused = 0
        """Copies that got a state instead of running setup."""
        self._states: dict[str, SetupState | None] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, task: Task, snapshot: Snapshot, python: str, run: RunSetup) -> SetupState | None:
        """The state for ``task`` on ``snapshot``; None when it cannot be reused."""
        key = dependency_key(task, snapshot, python)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._states:
                self._states[key] = self._build(key, snapshot, run)
            return self._states[key]

    def count_reuse(self) -> None:
        with self._guard:
            self.reused += 1

    def _build(self, key: str, snapshot: Snapshot, run: RunSetup) -> SetupState | None:
        folder = self.root / key
        prototype = copy_snapshot(snapshot, folder / "copy")
        home = folder / "home"
        home.mkdir()
        log = folder / "setup.log"
        outcome = run(prototype, home, log)
        with self._guard:
            self.built += 1
        if not outcome.ok or _wrote_home(home):
            return None
        return _added(snapshot.root, prototype, outcome, log)


def dependency_key(task: Task, snapshot: Snapshot, python: str) -> str:
    setup = task.spec.setup
    digest = hashlib.sha256()
    for part in (*setup.commands, setup.network, str(setup.timeout), snapshot.tree, python):
        digest.update(part.encode() + b"\0")
    for folder in task.shared:
        digest.update(os.fsencode(folder) + b"\0")
    if task.spec.environment is not None:
        # Setup in one image is not setup in another: the image (as named) is part of the state.
        digest.update(task.spec.environment.model_dump_json().encode() + b"\0")
    return digest.hexdigest()[:20]


def reuse_setup(
    states: SetupStates | None,
    task: Task,
    snapshot: Snapshot,
    copy: Path,
    *,
    python: str,
    home: Path,
    log: Path,
    run: RunSetup,
    same_dependencies: bool = True,
) -> SetupOutcome:
    """Set up ``copy``: from the task's reused state where there is one, else by running it."""
    if states is not None and task.spec.setup.reuse and same_dependencies:
        started = now()
        state = states.get(task, snapshot, python, run)
        if state is not None:
            apply_state(state, copy)
            states.count_reuse()
            note = f"# setup ran once for this dependency state ({state.log}); its output:\n"
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("ab") as handle:
                handle.write(note.encode() + state.log.read_bytes())
            return SetupOutcome(state.outcome.commands, 0, False, now() - started)
    return run(copy, home, log)


def apply_state(state: SetupState, copy: Path) -> None:
    """Copy what setup added into ``copy`` (a fresh copy of the same base)."""
    old, new = os.fsencode(state.prototype), os.fsencode(copy)
    for rel in state.dirs:
        (copy / rel).mkdir(exist_ok=True)
    for rel in state.files:
        source, target = state.prototype / rel, copy / rel
        if target.is_symlink() or target.is_file():
            target.unlink()
        if source.is_symlink():
            link = os.fsencode(os.readlink(source))
            os.symlink(os.fsdecode(link.replace(old, new)), target)
        elif rel in state.rewrite:
            target.write_bytes(source.read_bytes().replace(old, new))
            shutil.copymode(source, target)
        else:
            shutil.copy2(source, target)


def _wrote_home(home: Path) -> bool:
    return any(entry.name not in _CACHE_HOMES for entry in home.iterdir())


def _added(base: Path, prototype: Path, outcome: SetupOutcome, log: Path) -> SetupState | None:
    """What setup added; None when it also changed or removed something of the base."""
    for dirpath, dirnames, filenames in os.walk(base):
        for name in [*dirnames, *filenames]:
            before = Path(dirpath) / name
            after = prototype / before.relative_to(base)
            if not _same_entry(before, after):
                return None
    needle = os.fsencode(prototype)
    dirs: list[str] = []
    files: list[str] = []
    rewrite: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(prototype):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if d not in _SKIPPED_DIRS]
        for name in dirnames:
            path = here / name
            rel = path.relative_to(prototype).as_posix()
            if (base / rel).exists() or (base / rel).is_symlink():
                continue
            if path.is_symlink():  # a link to a folder: never followed, copied as a link
                files.append(rel)
                if needle in os.fsencode(os.readlink(path)):
                    rewrite.add(rel)
            else:
                dirs.append(rel)
        for name in filenames:
            path = here / name
            rel = path.relative_to(prototype).as_posix()
            if (base / rel).exists() or (base / rel).is_symlink():
                continue
            files.append(rel)
            if path.is_symlink():
                data = os.fsencode(os.readlink(path))
            elif path.is_file():
                data = path.read_bytes()
            else:
                return None  # a socket or a pipe: nothing a copy can hold
            if needle in data:
                if b"\0" in data and not path.is_symlink():
                    return None  # a binary naming the prototype cannot be moved safely
                rewrite.add(rel)
    return SetupState(prototype, tuple(dirs), tuple(files), frozenset(rewrite), outcome, log)


def _same_entry(before: Path, after: Path) -> bool:
    try:
        old, new = before.lstat(), after.lstat()
    except OSError:
        return False
    if stat.S_ISDIR(old.st_mode):
        return stat.S_ISDIR(new.st_mode)  # a folder's times change as files are added to it
    return (old.st_mode, old.st_size, old.st_mtime_ns) == (
        new.st_mode,
        new.st_size,
        new.st_mtime_ns,
    )
