"""Folders no sandbox may show, wherever they lie: every results folder, every suite and task.

A results folder holds earlier agents' diffs and the graders' logs, so the reference solution of
a task can be read back from it. Each one is marked with a file the moment harnessdrive opens it
and registered in a per-user list; a sandbox covers every registered folder that lies under
something it shows. As a second net, the folders a sandbox shows outside the system are searched
a few levels deep for results folders (marked, or laid out as one: ``index.sqlite`` beside
``trials/``), suites (``suite.toml``) and tasks (``task.toml``), and those are covered too.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

MARKER = ".harnessdrive-results"
_MARKER_TEXT = "A harnessdrive results folder: no agent's sandbox shows it.\n"
_SUITE_FILES = ("suite.toml", "task.toml")
_SCAN_DEPTH = 4
_SCAN_BUDGET = 50_000
"""Folders looked at per shown root at most, so a huge tree costs a bounded time."""


def registry_folder(env: Mapping[str, str] | None = None) -> Path:
    """``${XDG_STATE_HOME:-~/.local/state}/harnessdrive/results-folders``: one file per folder."""
    source = os.environ if env is None else env
    state = source.get("XDG_STATE_HOME") or os.path.join(
        source.get("HOME") or os.path.expanduser("~"), ".local", "state"
    )
    return Path(state) / "harnessdrive" / "results-folders"


def mark_results_folder(root: Path) -> None:
    """Mark ``root`` as a results folder and register it; best effort, never fails a run."""
    root = Path(os.path.realpath(root))
    with contextlib.suppress(OSError):
        marker = root / MARKER
        if not marker.exists():
            marker.write_text(_MARKER_TEXT, encoding="utf-8")
    with contextlib.suppress(OSError):
        folder = registry_folder()
        folder.mkdir(parents=True, exist_ok=True)
        entry = folder / hashlib.sha256(os.fsencode(root)).hexdigest()[:32]
        if not entry.exists():
            entry.write_bytes(os.fsencode(root) + b"\n")


def registered_results_folders() -> list[str]:
    """Every registered results folder that still exists; entries of removed ones are dropped."""
    folder = registry_folder()
    found: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return found
    for entry in entries:
        path = _registered_path(entry.path)
        if path is None:
            continue
        if is_results_folder(path):
            found.append(path)
        elif not os.path.lexists(path):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
            _REGISTERED.pop(entry.path, None)
    return found


_REGISTERED: dict[str, str] = {}
"""Entry file -> the folder it names. Every sandboxed launch reads the registry, which can hold
many entries; an entry's name is a hash of its content, written once, so one complete read of it
holds for as long as the file is there."""


def _registered_path(entry: str) -> str | None:
    known = _REGISTERED.get(entry)
    if known is not None:
        return known
    try:
        data = Path(entry).read_bytes()
    except OSError:
        return None
    path = os.fsdecode(data.strip())
    if data.endswith(b"\n"):  # complete (a read racing its write sees less)
        _REGISTERED[entry] = path
    return path


def is_results_folder(path: str) -> bool:
    if os.path.isfile(os.path.join(path, MARKER)):
        return True
    return os.path.isfile(os.path.join(path, "index.sqlite")) and os.path.isdir(
        os.path.join(path, "trials")
    )


def _is_sealed(path: str, names: set[str]) -> bool:
    if MARKER in names or any(name in names for name in _SUITE_FILES):
        return True
    return "index.sqlite" in names and "trials" in names and is_results_folder(path)


@functools.lru_cache(maxsize=256)
def _sealed_under(root: str) -> tuple[str, ...]:
    found: list[str] = []
    budget = _SCAN_BUDGET
    level = [root]
    for _depth in range(_SCAN_DEPTH + 1):
        below: list[str] = []
        for folder in level:
            budget -= 1
            if budget < 0:
                return tuple(found)
            try:
                with os.scandir(folder) as listing:
                    entries = list(listing)
            except OSError:
                continue
            names = {entry.name for entry in entries}
            if _is_sealed(folder, names):
                found.append(folder)
                continue  # covered whole; nothing below it is shown
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        below.append(entry.path)
        level = below
    return tuple(found)


def sealed_under(roots: Iterable[str]) -> list[str]:
    """Results, suite and task folders found in ``roots`` (a root itself too), a few levels deep.

    Remembered per root for the life of the process: tool folders rarely change during a run,
    and results folders made later are found through the registry.
    """
    found: list[str] = []
    for root in roots:
        found += _sealed_under(os.path.normpath(root))
    return found
