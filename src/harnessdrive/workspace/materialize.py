"""Fresh copies of a snapshot, and writing files into them without following planted links."""

from __future__ import annotations

import io
import os
import posixpath
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from harnessdrive.errors import ChangeError, WorkspaceError
from harnessdrive.workspace.blobs import blob_reader
from harnessdrive.workspace.changes import GITLINK_MODE, SYMLINK_MODE, FileChange
from harnessdrive.workspace.snapshot import Snapshot
from harnessdrive.workspace.tree_copy import copy_tree

# Below this many files an in-process copy beats starting ``cp``; above it ``cp`` wins.
_IN_PROCESS_COPY_LIMIT = 2000


def copy_snapshot(snapshot: Snapshot, dest: Path) -> Path:
    """A new folder with the base files and their one-commit ``.git``."""
    if dest.exists():
        raise WorkspaceError(f"workspace folder already exists: {dest}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if snapshot.files <= _IN_PROCESS_COPY_LIMIT:
        try:
            copy_tree(snapshot.root, dest)
        except (OSError, WorkspaceError) as exc:
            raise WorkspaceError(f"cannot copy the base state: {exc}") from exc
        return dest
    result = subprocess.run(
        ["cp", "-a", "--reflink=auto", "--", str(snapshot.root), str(dest)],
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        raise WorkspaceError(f"cannot copy the base state: {result.stderr.decode().strip()}")
    return dest


def apply_changes(snapshot: Snapshot, root: Path, changes: Iterable[FileChange]) -> None:
    """Write the given changes into ``root``, a fresh copy of the snapshot.

    Deletions go first, so a file can replace a folder and the other way round. Symlinks whose
    target leaves the tree are not created (the tamper check reports them). A change that cannot
    be written (a path too long for the copy's place, say) raises :class:`ChangeError`.
    """
    try:
        _apply(snapshot, root, list(changes))
    except ChangeError:
        raise
    except (WorkspaceError, OSError) as exc:
        raise ChangeError(f"the change cannot be written into the grading copy: {exc}") from exc


def _apply(snapshot: Snapshot, root: Path, changes: list[FileChange]) -> None:
    for change in changes:
        if change.kind == "deleted":
            remove_entry(root, change.path)
    # A gitlink (a nested repository) has no blob here and is never part of what is graded.
    wanted = [c for c in changes if c.kind != "deleted" and c.new_mode != GITLINK_MODE]
    with blob_reader(snapshot.shadow) as blobs:
        for change in wanted:
            assert change.new_blob is not None and change.new_mode is not None
            if change.new_mode == SYMLINK_MODE:
                buffer = io.BytesIO()
                blobs.copy(change.new_blob, buffer)
                target = buffer.getvalue().decode("utf-8", "surrogateescape")
                if symlink_escapes(change.path, target):
                    remove_entry(root, change.path)
                    continue
                place_symlink(root, change.path, target)
            else:
                # Streamed into place: a large file never sits whole in memory.
                target_path = _prepare(root, change.path)
                with target_path.open("xb") as handle:
                    blobs.copy(change.new_blob, handle)
                target_path.chmod(0o755 if change.new_mode == "100755" else 0o644)


def symlink_escapes(path: str, target: str) -> bool:
    """True when a link at ``path`` (relative to the tree root) points outside the tree."""
    if posixpath.isabs(target):
        return True
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return resolved == ".." or resolved.startswith("../")


def write_file(root: Path, rel: str, data: bytes, *, executable: bool = False) -> Path:
    """Write ``root/rel``, replacing whatever stands there and never following a link."""
    target = _prepare(root, rel)
    target.write_bytes(data)
    target.chmod(0o755 if executable else 0o644)
    return target


def place_symlink(root: Path, rel: str, link_target: str) -> None:
    os.symlink(link_target, _prepare(root, rel))


def remove_entry(root: Path, rel: str) -> None:
    _clear(_spot(root, rel, make_parents=False))


def _prepare(root: Path, rel: str) -> Path:
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
