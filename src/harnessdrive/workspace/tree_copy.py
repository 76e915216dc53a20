"""Copy a snapshot's folder fast: every trial makes two copies (its workspace, its grading copy).

``shutil.copytree`` spends most of a small snapshot's copy on calls that a copy of our own
snapshot does not need: a ``stat`` of each file by name before and after opening it, and a
listing of extended attributes (a snapshot is written by us and has none). Here each file is
opened once, its content copied in the kernel and its mode and times set through the open
descriptor. Links are copied as links and never followed; anything but a folder, a file or a
link is refused.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from harnessdrive.errors import WorkspaceError

_CHUNK = 1024 * 1024
_NO_KERNEL_COPY = frozenset({errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP})


def copy_tree(source: Path, dest: Path) -> None:
    """Copy the folder ``source`` to ``dest`` (which must not exist), keeping modes and times."""
    os.mkdir(dest, 0o700)
    made: list[tuple[str, os.stat_result]] = [(str(dest), os.stat(source))]
    pending = [(str(source), str(dest))]
    while pending:
        here, there = pending.pop()
        with os.scandir(here) as listing:
            entries = list(listing)
        for entry in entries:
            target = os.path.join(there, entry.name)
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                os.mkdir(target, 0o700)
                made.append((target, info))
                pending.append((entry.path, target))
            elif stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(entry.path), target)
                os.utime(target, ns=_times(info), follow_symlinks=False)
            elif stat.S_ISREG(info.st_mode):
                _copy_file(entry.path, target, info)
            else:
                raise WorkspaceError(f"not a file, folder or link: {entry.path}")
    # Folders last, deepest first: filling a folder changes its time.
    for folder, info in reversed(made):
        os.chmod(folder, stat.S_IMODE(info.st_mode))
        os.utime(folder, ns=_times(info))


def _copy_file(source: str, target: str, info: os.stat_result) -> None:
    reading = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        writing = os.open(target, flags, 0o600)
        try:
            _copy_content(reading, writing, info.st_size)
            os.fchmod(writing, stat.S_IMODE(info.st_mode))
            os.utime(writing, ns=_times(info))
        finally:
            os.close(writing)
    finally:
        os.close(reading)


def _copy_content(reading: int, writing: int, size: int) -> None:
    copy_range = getattr(os, "copy_file_range", None)
    if copy_range is not None and size > 0:
        try:
            while copy_range(reading, writing, _CHUNK):
                pass
            return
        except OSError as exc:
            if exc.errno not in _NO_KERNEL_COPY:
                raise
            os.lseek(reading, 0, os.SEEK_SET)
            os.lseek(writing, 0, os.SEEK_SET)
            os.ftruncate(writing, 0)
    while chunk := os.read(reading, _CHUNK):
        view = memoryview(chunk)
        while view:
            view = view[os.write(writing, view) :]


def _times(info: os.stat_result) -> tuple[int, int]:
    return (info.st_atime_ns, info.st_mtime_ns)
