"""What an agent changed in its workspace, measured against the snapshot's one commit.

The agent's own ``.git`` is never consulted: its files are hashed into the snapshot's shadow
repository through a private index, so commits, resets and rewritten history change nothing here.
What git must not read (nested repositories, oversized and special files) is found first and left
out (:mod:`harnessdrive.workspace.scan`); the patch kept in memory and on disk is capped.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from harnessdrive.errors import ChangeError, WorkspaceError
from harnessdrive.workspace.git import git, git_head
from harnessdrive.workspace.scan import DEFAULT_MAX_FILE_BYTES, LeftOut, scan_workspace
from harnessdrive.workspace.snapshot import Snapshot

ChangeKind = Literal["added", "modified", "deleted", "type_changed"]
_KINDS: dict[str, ChangeKind] = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "T": "type_changed",
}
SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"
PATCH_LIMIT_BYTES = 16 * 1024 * 1024
# Ends a patch cut at the limit, so a reader knows that files past it are missing.
PATCH_CUT_MARK = "[harnessdrive: patch cut:"
"""The most of a change's patch kept (``diff.patch``); the file list and counts are complete."""


@dataclass(frozen=True)
class FileChange:
    path: str
    kind: ChangeKind
    old_mode: str | None
    new_mode: str | None
    new_blob: str | None
    added_lines: int
    deleted_lines: int
    binary: bool

    @property
    def is_symlink(self) -> bool:
        return self.new_mode == SYMLINK_MODE


@dataclass(frozen=True)
class Changes:
    base_tree: str
    tree: str
    files: tuple[FileChange, ...]
    patch: bytes
    left_out: tuple[LeftOut, ...] = ()
    """Paths of the workspace that are not part of the change, each with its reason."""
    patch_bytes: int = 0
    """The whole patch's size; more than ``len(patch)`` when it was cut."""

    @property
    def lines_added(self) -> int:
        return sum(f.added_lines for f in self.files)

    @property
    def lines_deleted(self) -> int:
        return sum(f.deleted_lines for f in self.files)

    @property
    def lines_changed(self) -> int:
        return self.lines_added + self.lines_deleted

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)

    def __bool__(self) -> bool:
        return bool(self.files)


def capture_changes(
    snapshot: Snapshot, workspace: Path, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> Changes:
    """Hash the workspace's files into a tree and diff it against the base tree.

    A path left out keeps its base state in the tree (a tracked file replaced by a fifo, say).
    """
    left_out = tuple(scan_workspace(workspace, max_file_bytes=max_file_bytes, base=snapshot.root))
    # Beside the snapshot, inside the run's scratch root: a killed driver leaves nothing elsewhere.
    with tempfile.TemporaryDirectory(prefix="index-", dir=snapshot.shadow.parent) as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        shadow = snapshot.shadow
        shutil.copyfile(snapshot.root / ".git" / "index", env["GIT_INDEX_FILE"])
        # Pathspecs from a NUL-separated file, each literal: no name is read as an option, a
        # glob or a magic word, and any byte may appear in it.
        pathspecs = Path(scratch) / "pathspecs"
        pathspecs.write_bytes(_pathspec_file(left_out))
        try:
            git(
                "add",
                "-A",
                f"--pathspec-from-file={pathspecs}",
                "--pathspec-file-nul",
                git_dir=shadow,
                work_tree=workspace,
                env=env,
                cwd=workspace,
            )
        except WorkspaceError as exc:
            # The scan leaves out every kind of entry known to stop git; anything else that
            # does is still the agent's content, never a failure of ours.
            raise ChangeError(f"the workspace cannot be read as a change: {exc}") from exc
        tree = git("write-tree", git_dir=shadow, env=env).decode().strip()
    changes = diff_trees(snapshot, snapshot.tree, tree)
    return replace(changes, left_out=tuple(item for item in left_out if not item.unchanged))


def _pathspec_file(left_out: tuple[LeftOut, ...]) -> bytes:
    specs = [b"."] + [
        b":(top,exclude,literal)" + item.path.encode("utf-8", "surrogateescape")
        for item in left_out
    ]
    return b"\0".join(specs) + b"\0"


def diff_trees(snapshot: Snapshot, base_tree: str, tree: str) -> Changes:
    if base_tree == tree:
        return Changes(base_tree=base_tree, tree=tree, files=(), patch=b"")
    shadow = snapshot.shadow
    raw = git(
        "diff-tree",
        "-r",
        "-z",
        "--raw",
        "--numstat",
        "--no-renames",
        "--no-abbrev",
        base_tree,
        tree,
        git_dir=shadow,
    )
    patch, patch_bytes = git_head(
        "diff-tree",
        "-r",
        "-p",
        "--binary",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        base_tree,
        tree,
        limit=PATCH_LIMIT_BYTES,
        git_dir=shadow,
    )
    if patch_bytes > len(patch):
        patch += (
            f"\n{PATCH_CUT_MARK} {patch_bytes} bytes in all, the first {len(patch)} are kept]\n"
        ).encode()
    return Changes(
        base_tree=base_tree,
        tree=tree,
        files=_parse_raw(raw),
        patch=patch,
        patch_bytes=patch_bytes,
    )


def _parse_raw(output: bytes) -> tuple[FileChange, ...]:
    """Parse ``--raw --numstat -z``: raw records first, then numstat records."""
    fields = output.split(b"\0")
    raw: dict[str, tuple[str, str, str, str]] = {}
    order: list[str] = []
    stats: dict[str, tuple[int, int, bool]] = {}
    i = 0
    while i < len(fields):
        field = fields[i]
        if field.startswith(b":"):
            old_mode, new_mode, _old_sha, new_sha, status = field[1:].decode().split(" ")
            path = fields[i + 1].decode("utf-8", "surrogateescape")
            raw[path] = (old_mode, new_mode, new_sha, status[0])
            order.append(path)
            i += 2
        elif field:
            added_text, deleted_text, path_bytes = field.split(b"\t", 2)
            binary = added_text == b"-"
            stats[path_bytes.decode("utf-8", "surrogateescape")] = (
                0 if binary else int(added_text),
                0 if binary else int(deleted_text),
                binary,
            )
            i += 1
        else:
            i += 1
    changes = []
    for path in order:
        old_mode, new_mode, new_sha, status = raw[path]
        added, deleted, binary = stats.get(path, (0, 0, False))
        deleted_file = status == "D"
        changes.append(
            FileChange(
                path=path,
                kind=_KINDS.get(status, "modified"),
                old_mode=None if old_mode == "000000" else old_mode,
                new_mode=None if deleted_file else new_mode,
                new_blob=None if deleted_file else new_sha,
                added_lines=added,
                deleted_lines=deleted,
                binary=binary,
            )
        )
    return tuple(changes)
