"""One run per results folder at a time.

The lock is an exclusive ``flock`` on ``<results>/lock``, which the kernel releases when its owner
dies however it dies; the file also holds the owner's pid so that a refusal can name it and a
takeover of a dead owner's lock can say so.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

import psutil

from harnessdrive.errors import LockedError, Setting


class ResultsLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self.took_over_from: int | None = None
        """The pid of a dead process whose lock file we found, if any."""

    def acquire(self) -> ResultsLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _read_pid(fd)
            os.close(fd)
            who = f"process {owner}" if owner else "another process"
            raise LockedError(
                f"{who} is running on the results folder {self.path.parent}; "
                "wait for it or use another results folder",
                settings=(Setting("results"),),
            ) from None
        previous = _read_pid(fd)
        if previous and previous != os.getpid() and not psutil.pid_exists(previous):
            self.took_over_from = previous
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> ResultsLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None
