"""Per-trial limits on processes, memory, file size and disk, and the watchdog that holds them.

The kernel holds what it can cheaply: ``prlimit`` puts a file-size, data-size and process-count
limit on the process before it starts (so nothing it forks can lift them). Those are per process
or per user, and the process count is not enforced for root at all (so not set for root); a
watchdog also samples cheap system-wide figures (task count, available memory, free disk) on
every poll and measures the process tree itself only when one of them moved by more than half a
limit. A breach ends the whole tree and is recorded as the limit it hit.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import psutil

from harnessdrive.sandbox.clock import now

LimitName = Literal["processes", "memory", "file_size", "disk"]

MiB = 1024 * 1024
GiB = 1024 * MiB

# The kernel counts threads against RLIMIT_NPROC, for the whole user: leave room for both.
_NPROC_THREADS_PER_PROCESS = 16
# Seconds between measurements of the tree itself: soon after a cheap figure moved, and now and
# then in any case.
_PRECISE_EVERY = {"processes": 0.1, "memory": 0.25, "disk": 0.5}
_FALLBACK_EVERY = {"processes": 0.5, "memory": 1.0, "disk": 2.0}


@dataclass(frozen=True)
class Limits:
    """What one trial's processes may use. ``None`` means no limit of that kind."""

    processes: int | None = 1024
    """Processes alive at once in the tree (a fork bomb is stopped when it passes this)."""
    memory: int | None = None
    """Bytes resident in the whole tree; also each process's data-segment limit."""
    file_size: int | None = 8 * GiB
    """Bytes in any one file a process writes."""
    disk: int | None = 32 * GiB
    """Bytes under the folders the process may write (its workspace, HOME and tmp)."""

    def with_overrides(
        self,
        *,
        processes: int | None = None,
        memory_mb: int | None = None,
        file_size_mb: int | None = None,
        disk_mb: int | None = None,
    ) -> Limits:
        """These limits with a task's own values (in MiB where named so) put in."""
        return Limits(
            processes=processes if processes is not None else self.processes,
            memory=memory_mb * MiB if memory_mb is not None else self.memory,
            file_size=file_size_mb * MiB if file_size_mb is not None else self.file_size,
            disk=disk_mb * MiB if disk_mb is not None else self.disk,
        )

    def prlimit_argv(self, total_tasks: int) -> list[str]:
        """``prlimit`` options that put the kernel-enforced part of these limits in place."""
        options = []
        # The kernel does not count root's processes (bubblewrap's user namespace included), so
        # for root the limit would hold nothing and only stop a nested tool (this one, in a
        # trial of its own) from raising its own.
        if self.processes is not None and os.geteuid() != 0:
            # Counted per user over all their threads, so the limit sits on top of what runs now.
            nproc = self.processes * _NPROC_THREADS_PER_PROCESS + total_tasks
            options.append(f"--nproc={within_hard(resource.RLIMIT_NPROC, nproc)}")
        if self.memory is not None:
            options.append(f"--data={within_hard(resource.RLIMIT_DATA, self.memory)}")
        if self.file_size is not None:
            options.append(f"--fsize={within_hard(resource.RLIMIT_FSIZE, self.file_size)}")
        return options


def within_hard(which: int, value: int) -> int:
    """Never ask for more than the current hard limit: raising it needs a privilege even root
    may lack (in a container, or when harnessdrive runs inside a trial of its own)."""
    _, hard = resource.getrlimit(which)
    return value if hard == resource.RLIM_INFINITY else min(value, hard)


def default_limits() -> Limits:
    """The limits a trial gets unless its task says otherwise: memory is 3/4 of this machine."""
    return Limits(memory=psutil.virtual_memory().total * 3 // 4)


def describe(limit: LimitName, limits: Limits | None) -> str:
    """What a limit hit means, for the record: ``stopped: more than 1024 processes (...)``."""
    if limits is None:
        return f"stopped: {limit.replace('_', ' ')} limit"
    value = getattr(limits, limit)
    if limit == "processes":
        return f"stopped: more than {value} processes (process limit)"
    amount = _bytes(value) if isinstance(value, int) else "?"
    what = {"memory": "memory", "file_size": "one file's size", "disk": "disk use"}[limit]
    return f"stopped: {what} over {amount} ({limit.replace('_', ' ')} limit)"


def _bytes(value: int) -> str:
    if value >= GiB and value % GiB == 0:
        return f"{value // GiB} GiB"
    return f"{value / MiB:g} MiB"


def prlimit_binary() -> str | None:
    return cached_which("prlimit")


def cached_which(name: str) -> str | None:
    """``shutil.which``, remembered per PATH: it is asked before every command."""
    return _which(name, os.environ.get("PATH", os.defpath))


@functools.lru_cache(maxsize=64)
def _which(name: str, path: str) -> str | None:
    return shutil.which(name, path=path)


def total_tasks() -> int:
    """Threads alive on the machine (the 4th field of /proc/loadavg): one small read."""
    try:
        fields = Path("/proc/loadavg").read_text().split()
        return int(fields[3].split("/")[1])
    except (OSError, IndexError, ValueError):
        return len(psutil.pids())


def _available_memory() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return psutil.virtual_memory().available


_PAGE = os.sysconf("SC_PAGE_SIZE")


def _resident(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _free_bytes(path: Path) -> int | None:
    try:
        stat = os.statvfs(path)
    except OSError:
        return None
    return stat.f_bavail * stat.f_frsize


def disk_usage(paths: Sequence[Path]) -> int:
    """Bytes allocated under ``paths`` (links are not followed, hard links counted once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    stack = [str(p) for p in paths]
    while stack:
        folder = stack.pop()
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    key = (info.st_dev, info.st_ino)
                    if key in seen:
                        continue
                    seen.add(key)
                    total += info.st_blocks * 512
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
    return total


def _any_file_of_size(paths: Sequence[Path], size: int) -> bool:
    stack = [str(p) for p in paths]
    while stack:
        folder = stack.pop()
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False) and entry.stat().st_size >= size:
                        return True
    return False


class Watchdog:
    """Decides, poll by poll, whether a running tree broke one of its limits."""

    def __init__(
        self,
        limits: Limits,
        tree: Callable[[int | None], list[int]],
        watched: Sequence[Path] = (),
    ) -> None:
        self.limits = limits
        self._tree = tree
        self._watched = tuple(p for p in watched if p.is_dir())
        self._started = now()
        self._last_precise: dict[str, float] = {}
        self._fallback = dict(_FALLBACK_EVERY)
        self._tasks_base = total_tasks()
        self._memory_base = _available_memory()
        self._disk_path = self._watched[0] if self._watched else None
        self._free_base = _free_bytes(self._disk_path) if self._disk_path else None

    def check(self) -> LimitName | None:
        """The limit broken now, if any."""
        limits = self.limits
        if limits.processes is not None and self._suspect_processes(limits.processes):
            return "processes"
        if limits.memory is not None and self._suspect_memory(limits.memory):
            return "memory"
        if limits.disk is not None and self._suspect_disk(limits.disk):
            return "disk"
        return None

    def after_exit(self) -> LimitName | None:
        """Once the tree is gone: did a write stop at the file-size limit?

        The kernel refuses the write (and SIGXFSZ usually ends the writer) without telling us;
        a file at the limit is the trace it leaves. Only looked for when the free disk space
        shrank by half that much, so the common case costs one ``statvfs`` (and other writers
        on the same disk can hide it: then only the writer's exit status tells).
        """
        size = self.limits.file_size
        if size is None or self._disk_path is None or self._free_base is None:
            return None
        free = _free_bytes(self._disk_path)
        if free is None or self._free_base - free < size // 2:
            return None
        return "file_size" if _any_file_of_size(self._watched, size) else None

    def _due(self, kind: str, suspected: bool) -> bool:
        """Measure now? At once on a first suspicious figure and soon after each later one; now
        and then in any case, counted from the start (others on the machine freeing memory or
        disk space can hide our growth from the cheap figures). A quiet command shorter than
        the first period is never measured: walking its tree and folders at every start would
        take CPU from the command itself (it runs at the lowest priority, the walk does not)."""
        last = self._last_precise.get(kind)
        current = now()
        if suspected:
            due = last is None or current - last >= _PRECISE_EVERY[kind]
        else:
            due = current - (self._started if last is None else last) >= self._fallback[kind]
        if due:
            self._last_precise[kind] = current
        return due

    def _suspect_processes(self, limit: int) -> bool:
        tasks = total_tasks()
        if not self._due("processes", tasks - self._tasks_base > limit // 2):
            return False
        count = len(self._tree(limit))
        if count > limit:
            return True
        # Others started work meanwhile: what is not ours becomes the new base.
        self._tasks_base = max(self._tasks_base, tasks - count)
        return False

    def _suspect_memory(self, limit: int) -> bool:
        available = _available_memory()
        if not self._due("memory", self._memory_base - available > limit // 2):
            return False
        resident = sum(_resident(pid) for pid in self._tree(None))
        if resident > limit:
            return True
        self._memory_base = min(self._memory_base, available + resident)
        return False

    def _suspect_disk(self, limit: int) -> bool:
        if self._disk_path is None or self._free_base is None:
            return False
        free = _free_bytes(self._disk_path)
        suspected = free is not None and self._free_base - free > limit // 2
        if not self._due("disk", suspected):
            return False
        started = now()
        used = disk_usage(self._watched)
        # A big workspace is walked less often: at most about 5% of the time.
        self._fallback["disk"] = max(_FALLBACK_EVERY["disk"], 20 * (now() - started))
        if used > limit:
            return True
        if free is not None:
            self._free_base = min(self._free_base, free + used)
        return False
