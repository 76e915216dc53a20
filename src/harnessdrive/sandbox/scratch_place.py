"""Which folder new scratch roots go in: the system temp dir, or a memory file system.

Every trial and every mining or self-test run creates and deletes a few thousand small files
(copies of the task's files, bytecode, logs). On a disk file system that churn is most of the
cost of a short run: creating a file after many were just deleted makes ext4 look past each of
them (cachetools' mining spends a fifth of its CPU time there), where a memory file system
(tmpfs) does it at once.

A memory file system is only chosen for runs whose changes are all known in advance (mining,
``check``, the built-in scripted agents): no agent can then write gigabytes there to crowd out
the other trials or the machine, which on disk the per-trial disk limit prevents. Even then it
must have room to spare: :data:`MEMORY_FLOOR` free, plus :data:`HEADROOM` times what the run's
copies are expected to take (``footprint``, from the size of the largest task tree). Otherwise,
and whenever the user chose (``HARNESSDRIVE_SCRATCH``, or ``TMPDIR``), the choice is theirs or
the system temp dir, as before. Where the system temp dir is itself in memory (many
distributions mount /tmp as tmpfs), it is used as it is.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import UserError

SCRATCH_VARIABLE = "HARNESSDRIVE_SCRATCH"
MEMORY_FOLDER = Path("/dev/shm")
GiB = 1024**3
MEMORY_FLOOR = 8 * GiB
"""Free space a memory file system keeps for everything else on the machine."""
HEADROOM = 4
"""Room for what the tests write beside the copies, as a multiple of the copies' size."""
_MEMORY_TYPES = frozenset({"tmpfs"})
# ramfs has no size limit and reports no free space: never chosen.


@dataclass(frozen=True)
class ScratchPlace:
    folder: Path
    why: str
    """Why this folder, in words (``doctor`` shows it)."""


def scratch_place(footprint: int | None = None, *, memory: Path = MEMORY_FOLDER) -> ScratchPlace:
    """Where a new scratch root goes.

    ``footprint``: the bytes the run's copies are expected to take at most, when every change
    it runs is known; None when an agent runs (the root then stays off memory file systems
    unless the user or the system put the temp dir there). ``memory``: the memory file system
    to consider.
    """
    chosen = os.environ.get(SCRATCH_VARIABLE, "")
    if chosen:
        folder = Path(chosen)
        if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
            raise UserError(f"{SCRATCH_VARIABLE}={chosen} is not a folder this user can write to")
        return ScratchPlace(folder, f"{SCRATCH_VARIABLE} names it")
    system = Path(tempfile.gettempdir())
    if os.environ.get("TMPDIR"):
        return ScratchPlace(system, "TMPDIR names it")
    if is_memory_backed(system):
        return ScratchPlace(system, "the system temp dir, in memory")
    if footprint is None:
        return ScratchPlace(system, "the system temp dir (agents' runs stay on disk)")
    room = memory_room(memory)
    if room is not None and room >= MEMORY_FLOOR + HEADROOM * footprint:
        return ScratchPlace(memory, f"a memory file system with {room / GiB:.0f} GiB free")
    return ScratchPlace(system, "the system temp dir (no memory file system with room)")


def memory_room(folder: Path = MEMORY_FOLDER) -> int | None:
    """Free bytes in ``folder`` when it is on a memory file system and we may write to it."""
    if not is_memory_backed(folder) or not os.access(folder, os.W_OK | os.X_OK):
        return None
    try:
        stat = os.statvfs(folder)
    except OSError:
        return None
    return stat.f_bavail * stat.f_frsize


def is_memory_backed(folder: Path) -> bool:
    """True when ``folder`` lies on a tmpfs (read from the mount table)."""
    try:
        target = os.path.realpath(folder)
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as table:
            mounts = [line.split() for line in table]
    except OSError:
        return False
    best, best_type = "", ""
    for fields in mounts:
        if len(fields) < 3:
            continue
        point = _unescape(fields[1])
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, best_type = point, fields[2]
    return best_type in _MEMORY_TYPES


def _unescape(field: str) -> str:
    """The mount table writes spaces, tabs, newlines and backslashes as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field
