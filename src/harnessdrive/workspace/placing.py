"""Putting entries into a tree without leaving it: every parent a real folder, never a link
followed, never a path outside the root. Whatever an agent or a repository left in a tree is
hostile, so a single file, link or removal in one goes through here.
"""

from __future__ import annotations

import os
import posixpath
import shutil
from pathlib import Path

from harnessdrive.errors import WorkspaceError


def symlink_escapes(path: str, target: str) -> bool:
    """True when a link at ``path`` (relative to the tree root) points outside the tree."""
    if posixpath.isabs(target):
        return True
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return resolved == ".." or resolved.startswith("../")


def write_file(root: Path, rel: str, data: bytes, *, executable: bool = False) -> Path:
    """Write ``root/rel``, replacing whatever stands there and never following a link."""
    target = prepare_path(root, rel)
    target.write_bytes(data)
    target.chmod(0o755 if executable else 0o644)
    return target


def place_symlink(root: Path, rel: str, link_target: str) -> None:
    os.symlink(link_target, prepare_path(root, rel))


def remove_entry(root: Path, rel: str) -> None:
    _clear(_spot(root, rel, make_parents=False))


def prepare_path(root: Path, rel: str) -> Path:
    """Make ``root/rel``'s parents real folders and clear the spot itself."""
    target = _spot(root, rel, make_parents=True)
    _clear(target)
    return target


def _spot(root: Path, rel: str, *, make_parents: bool) -> Path:
    """``root/rel``, refusing to reach outside the tree or through a link.

    With ``make_parents``, a link or file standing where a parent folder belongs is replaced by
    a real folder; without it, such a parent is an error.
    """
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        raise WorkspaceError(f"refusing to touch a path outside the tree: {rel!r}")
    current = root
    for part in parts[:-1]:
        current = current / part
        blocked = current.is_symlink() or (current.exists() and not current.is_dir())
        if blocked and not make_parents:
            raise WorkspaceError(f"refusing to follow a link inside the tree: {current}")
        if blocked:
            current.unlink()
        if make_parents and not current.exists():
            current.mkdir()
    return current / parts[-1]


def _clear(target: Path) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
