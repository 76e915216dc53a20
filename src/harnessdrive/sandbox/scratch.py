"""Our scratch folders: made with an owner record, swept when the owner is gone.

They go in the system temp dir, or in a memory file system for runs of known changes only
(:mod:`harnessdrive.sandbox.scratch_place`).

A driver killed with ``kill -9`` cannot remove its scratch root (snapshots, workspaces, private
HOMEs). Each root holds a small owner record (pid and process start time, so a reused pid is not
mistaken for the owner); the next run removes every root whose owner is dead, after killing any
process still working in it or carrying it in its environment (the agents of ``--sandbox none``).
The root's name carries the pid too, given with the folder in one step, so a kill before the
record is written leaves no root that nothing sweeps (by name, a live pid counts as the owner:
a root may then wait for a later sweep, but is never taken from a live driver). Only folders
with our prefix, our owner mark (record or name) and our uid are ever touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import psutil

from harnessdrive.errors import UserError
from harnessdrive.sandbox.scratch_place import MEMORY_FOLDER, scratch_place
from harnessdrive.sandbox.tree import kill_strays

PREFIX = "harnessdrive-"
OWNER_FILE = ".harnessdrive-owner"
_OWNER_IN_NAME = re.compile(r"-p(\d+)-[a-z0-9_]+$")
"""``PREFIX...p<pid>-<random>``, as :func:`make_scratch_root` names roots (short: the relay's
sockets live in one, and a socket's path has at most 107 bytes)."""


def make_scratch_root(prefix: str = PREFIX, *, footprint: int | None = None) -> Path:
    """A new folder, recorded as owned by this process: in the system temp dir, or on a memory
    file system with room for ``footprint`` (see :func:`scratch_place`)."""
    folder = scratch_place(footprint).folder
    root = Path(tempfile.mkdtemp(prefix=f"{prefix}p{os.getpid()}-", dir=folder))
    _write_owner(root, kept=False)
    return root


def keep_scratch_root(root: Path) -> None:
    """The user asked to keep it (``--keep``): no later sweep may remove it."""
    _write_owner(root, kept=True)


def sweep_stale_scratch(folder: Path | None = None) -> list[Path]:
    """Remove scratch roots of dead owners from ``folder`` (by default every folder roots are
    made in); returns them."""
    removed = []
    for entry in _roots_in([folder] if folder is not None else _scratch_folders()):
        if entry.is_symlink() or not entry.is_dir():
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_uid != os.getuid() or not owner_is_gone(entry):
                continue
            kill_strays(str(entry))
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _scratch_folders() -> list[Path]:
    folders = [Path(tempfile.gettempdir()), MEMORY_FOLDER]
    with contextlib.suppress(UserError):
        folders.insert(0, scratch_place().folder)
    return list(dict.fromkeys(folders))


def _roots_in(folders: list[Path]) -> list[Path]:
    entries = []
    for folder in folders:
        with contextlib.suppress(OSError):
            entries += [e for e in folder.iterdir() if e.name.startswith(PREFIX)]
    return entries


def owner_is_gone(root: Path) -> bool:
    """True only for a root with our owner record (or, without one, our name) whose owner is
    dead and that was not kept."""
    try:
        owner = json.loads((root / OWNER_FILE).read_text())
        pid = int(owner["pid"])
        started = float(owner["started"])
    except (OSError, ValueError, KeyError, TypeError):
        # No record, or half of one: killed while making the root. Its name says whose it is.
        named = _OWNER_IN_NAME.search(root.name)
        if named is None or not root.name.startswith(PREFIX):
            return False
        return not psutil.pid_exists(int(named[1]))
    if owner.get("kept"):
        return False
    try:
        process = psutil.Process(pid)
        alive = abs(process.create_time() - started) < 1.0 and process.status() != "zombie"
    except psutil.Error:
        alive = False
    return not alive


def _write_owner(root: Path, *, kept: bool) -> None:
    me = psutil.Process()
    record = {"pid": me.pid, "started": me.create_time(), "kept": kept}
    (root / OWNER_FILE).write_text(json.dumps(record) + "\n")
