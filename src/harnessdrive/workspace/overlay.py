"""A snapshot with files laid over another: the start of a treated arm (docs/matrix.md).

The overlay becomes part of the base state, so the agent's change is measured against the
treated files and a grading copy starts from them too: the treatment itself is never the
agent's change.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harnessdrive.workspace.git import IDENTITY, git
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.placing import write_file
from harnessdrive.workspace.snapshot import Snapshot, _compact, _write_info


def overlay_snapshot(base: Snapshot, files: Sequence[tuple[str, Path]], dest: Path) -> Snapshot:
    """``base`` with each ``(relative path, source file)`` written over it, as a new snapshot
    under ``dest`` (which must not exist yet)."""
    root = dest / "base"
    copy_snapshot(base, root)
    for rel, path in files:
        write_file(root, rel, path.read_bytes(), executable=bool(path.stat().st_mode & 0o111))
    git("add", "-A", "-f", "--", ".", cwd=root)
    tree = git("write-tree", cwd=root).decode().strip()
    commit = git("commit-tree", tree, "-m", "base", cwd=root, env=IDENTITY).decode().strip()
    git("update-ref", "--no-deref", "refs/heads/main", commit, cwd=root)
    tags = git("for-each-ref", "--format=%(refname)", "refs/tags", cwd=root).decode().split()
    for tag in tags:  # a version tag names the base commit; it now names the treated one
        git("update-ref", "--no-deref", tag, commit, cwd=root)
    _compact(root / ".git", repack=True)
    shadow = dest / "shadow.git"
    git("init", "-q", "--bare", "--template=", str(shadow))
    (shadow / "objects" / "info").mkdir(parents=True, exist_ok=True)
    (shadow / "objects" / "info" / "alternates").write_text(str(root / ".git" / "objects") + "\n")
    _write_info(shadow)
    count = len(git("ls-files", "-z", cwd=root).split(b"\0")) - 1
    return Snapshot(
        root=root,
        shadow=shadow,
        commit=commit,
        tree=tree,
        source=f"{base.source} + {len(files)} treatment file(s)",
        files=count,
    )
