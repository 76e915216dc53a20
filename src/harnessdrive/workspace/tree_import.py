"""Bring one tree of a repository into a new snapshot repository, the way git itself would.

The tree's objects travel as one pack (``pack-objects`` piped into ``index-pack``), and git
writes the files from the snapshot's own index. Nothing is hashed or compressed twice, and the
objects are already in one pack, so a snapshot of a large repository costs a fraction of writing
every file and adding it again. A tree that holds submodules (gitlinks) or no file at all, or
one of a SHA-256 repository, is left to the caller's file-by-file way: its snapshot is not the
same tree.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import WorkspaceError
from harnessdrive.workspace.git import git, git_failed, start_git

_SHA1_HEX = 40


@dataclass(frozen=True)
class ListedTree:
    tree: str
    ids: tuple[bytes, ...]
    """The tree's own id and every object id below it."""
    files: int


def listed_tree(repo: Path, treeish: str) -> ListedTree | None:
    """What ``treeish`` holds; None for a tree to copy file by file."""
    # ``commit:folder`` names a tree already; ``commit^{tree}`` is a commit's own.
    spec = treeish if ":" in treeish else f"{treeish}^{{tree}}"
    tree = git("rev-parse", "--verify", "--end-of-options", spec, cwd=repo).strip()
    if len(tree) != _SHA1_HEX:
        return None  # a SHA-256 repository: the snapshot (SHA-1) hashes its files anew
    listing = git("ls-tree", "-r", "-t", "-z", "--full-tree", treeish, cwd=repo)
    ids = [tree]
    files = 0
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, _path = record.partition(b"\t")
        _mode, kind, sha = meta.split(b" ")
        if kind == b"commit":
            return None
        files += kind == b"blob"
        ids.append(sha)
    if files == 0:
        return None
    return ListedTree(tree=tree.decode(), ids=tuple(ids), files=files)


def import_tree(repo: Path, listed: ListedTree, root: Path) -> None:
    """Copy a listed tree's objects into ``root/.git`` (made by the caller, attributes and all)
    and check its files out into ``root``; the index then holds exactly that tree."""
    git_dir = root / ".git"
    _copy_objects(repo, listed.ids, git_dir)
    git("read-tree", listed.tree, git_dir=git_dir, work_tree=root)
    git("checkout-index", "--all", "--force", "-u", git_dir=git_dir, work_tree=root)


def _copy_objects(repo: Path, ids: tuple[bytes, ...], git_dir: Path) -> None:
    # No delta search (--window=0): the pack never leaves the machine, and looking for deltas
    # costs more than the whole rest of a snapshot. Deltas the repository already has are kept.
    with tempfile.TemporaryFile() as pack_errors, tempfile.TemporaryFile() as index_errors:
        packer = start_git(
            ["pack-objects", "--stdout", "-q", "--window=0"], cwd=repo, stderr=pack_errors
        )
        assert packer.stdin is not None and packer.stdout is not None
        try:
            indexer = start_git(
                ["index-pack", "--stdin"],
                git_dir=git_dir,
                stdin=packer.stdout,
                stdout=subprocess.DEVNULL,
                stderr=index_errors,
            )
        except WorkspaceError:
            packer.kill()
            packer.wait()
            raise
        packer.stdout.close()  # the indexer holds the only reading end now
        try:
            packer.stdin.write(b"\n".join(ids) + b"\n")
        except BrokenPipeError:
            pass  # the packer failed; its exit status and message say why
        finally:
            packer.stdin.close()
        for name, proc, errors in (
            ("pack-objects", packer, pack_errors),
            ("index-pack", indexer, index_errors),
        ):
            if proc.wait() != 0:
                errors.seek(0)
                raise git_failed(name, proc.returncode, errors.read(64 * 1024))
