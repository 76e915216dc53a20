"""Fresh copies of a snapshot, and a change applied to one (written by :mod:`placing`, which never
follows a planted link)."""

from __future__ import annotations

import io
import subprocess
from collections.abc import Iterable
from pathlib import Path

from harnessdrive.errors import ChangeError, WorkspaceError
from harnessdrive.workspace.blobs import blob_reader
from harnessdrive.workspace.changes import GITLINK_MODE, SYMLINK_MODE, FileChange
from harnessdrive.workspace.placing import (
    place_symlink,
    prepare_path,
    remove_entry,
    symlink_escapes,
)
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
                target_path = prepare_path(root, change.path)
                with target_path.open("xb") as handle:
                    blobs.copy(change.new_blob, handle)
                target_path.chmod(0o755 if change.new_mode == "100755" else 0o644)
