"""What in an agent's workspace cannot be part of its change, found before git reads anything.

A workspace is hostile data. Git must never be asked to read a file of any size, descend into a
nested repository, or open a fifo; so the tree is walked first (``lstat`` only, nothing is opened
or followed) and every such entry is left out of the change with a reason:

- ``nested-repository``: a folder holding a ``.git`` folder or file (a clone, a submodule, a
  worktree). The whole folder is left out: its files are another project's, not the change.
- ``oversized-file``: a regular file over the size limit (sparse or not: the apparent size counts).
- ``special-file``: a fifo, socket or device node.
- ``unreadable``: a file or folder we may not read (mode 000, a folder without the x bit).

Symbolic links are kept (git records their target, never follows them); hard links are ordinary
files. Names are walked as bytes, so no name can fail to decode.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, replace
from fnmatch import fnmatch
from pathlib import Path
from typing import Literal

from harnessdrive.workspace.ignore import CACHE_DIR_PATTERNS, CACHE_DIRS

LeftOutCode = Literal["nested-repository", "oversized-file", "special-file", "unreadable"]
DEFAULT_MAX_FILE_BYTES = 50 * 1024 * 1024

_CACHE_DIRS = {os.fsencode(name) for name in CACHE_DIRS}


@dataclass(frozen=True)
class LeftOut:
    """One path of the workspace that is not part of the change, and why."""

    path: str
    """Relative to the workspace, ``/``-separated; bytes that are not UTF-8 as surrogate escapes."""
    code: LeftOutCode
    detail: str
    unchanged: bool = False
    """An oversized file of the base state, untouched: left out silently (it is no change)."""


def scan_workspace(
    root: Path, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, base: Path | None = None
) -> list[LeftOut]:
    """Every entry under ``root`` that git must not read, in path order.

    With ``base`` (the snapshot's files), an oversized file of the same size and modification
    time as the base's is marked ``unchanged``.
    """
    found: list[LeftOut] = []
    top = os.fsencode(root)
    pending = [b""]  # a stack, not recursion: a tree may be thousands of folders deep
    while pending:
        rel = pending.pop()
        found.extend(_scan_folder(top, rel, max_file_bytes, pending))
    if base is not None:
        found = [_against_base(item, root, base) for item in found]
    return sorted(found, key=lambda item: item.path)


def _against_base(item: LeftOut, root: Path, base: Path) -> LeftOut:
    if item.code != "oversized-file":
        return item
    try:
        mine = (root / item.path).lstat()
        theirs = (base / item.path).lstat()
    except OSError:
        return item
    same = (mine.st_size, mine.st_mtime_ns) == (theirs.st_size, theirs.st_mtime_ns)
    return replace(item, unchanged=True) if same and stat.S_ISREG(theirs.st_mode) else item


def _scan_folder(
    root: bytes, rel: bytes, max_bytes: int, pending: list[bytes]
) -> Iterator[LeftOut]:
    folder = os.path.join(root, rel) if rel else root
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        yield LeftOut(_text(rel), "unreadable", f"cannot list the folder: {exc.strerror}")
        return
    for entry in entries:
        name = entry.name
        path = os.path.join(rel, name) if rel else name
        if not rel and name == b".git":
            continue  # the workspace's own repository: never read for the change
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError as exc:
            yield LeftOut(_text(path), "unreadable", f"cannot stat: {exc.strerror}")
            continue
        mode = info.st_mode
        full = os.path.join(root, path)
        if stat.S_ISLNK(mode):
            continue
        if stat.S_ISDIR(mode):
            if name in _CACHE_DIRS or any(fnmatch(_text(name), p) for p in CACHE_DIR_PATTERNS):
                continue  # ignored by every change anyway
            marker = os.path.join(full, b".git")
            if os.path.lexists(marker):
                kind = "folder" if os.path.isdir(marker) else "file"
                yield LeftOut(
                    _text(path),
                    "nested-repository",
                    f"holds a .git {kind}: a repository of its own, left out with all its files",
                )
            elif not os.access(full, os.R_OK | os.X_OK):
                yield LeftOut(_text(path), "unreadable", "a folder we may not list or enter")
            else:
                pending.append(path)
        elif stat.S_ISREG(mode):
            if info.st_size > max_bytes:
                yield LeftOut(
                    _text(path),
                    "oversized-file",
                    f"{info.st_size} bytes, over the limit of {max_bytes}",
                )
            elif not os.access(full, os.R_OK):
                yield LeftOut(_text(path), "unreadable", "a file we may not read")
        else:
            yield LeftOut(_text(path), "special-file", f"a {_kind(mode)}, not a file")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    return "special file"


def _text(path: bytes) -> str:
    return path.decode("utf-8", "surrogateescape")
