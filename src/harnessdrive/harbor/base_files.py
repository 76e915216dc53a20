"""A task's starting files and its reference's result, as plain folders (for export)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from harnessdrive.errors import UserError
from harnessdrive.tasks.loading import Task
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot


def write_base(task: Task, dest: Path, scratch: Path) -> None:
    """The task's starting files in ``dest`` (no ``.git``)."""
    snapshot = build_snapshot(task.repo_path, task.spec.repo.ref, scratch / "snapshot")
    copy_snapshot(snapshot, dest)
    shutil.rmtree(dest / ".git", ignore_errors=True)


def write_solved(task: Task, base: Path, dest: Path) -> bool:
    """``base`` with the task's reference applied, in ``dest``; False without a reference."""
    solution = task.solution
    if solution is None:
        return False
    shutil.copytree(base, dest, symlinks=True)
    if solution.overlay is not None:
        shutil.copytree(solution.overlay, dest, symlinks=True, dirs_exist_ok=True)
    elif solution.patch is not None:
        out = subprocess.run(
            ["git", "apply", "--binary", "--whitespace=nowarn", str(solution.patch)],
            cwd=dest,
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode != 0:
            raise UserError(
                f"task {task.id}: its solution.patch does not apply: {out.stderr[:200]}"
            )
    return True


def changed_files(base: Path, solved: Path) -> tuple[list[str], list[str]]:
    """(files added or changed, files deleted) from ``base`` to ``solved``, relative paths."""
    before, after = _files(base), _files(solved)
    changed = [
        rel for rel in sorted(after) if rel not in before or _differs(base / rel, solved / rel)
    ]
    return changed, sorted(set(before) - set(after))


def _files(root: Path) -> set[str]:
    found = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            found.add(os.path.relpath(os.path.join(folder, name), root))
    return found


def _differs(a: Path, b: Path) -> bool:
    if a.is_symlink() or b.is_symlink():
        return not (a.is_symlink() and b.is_symlink() and os.readlink(a) == os.readlink(b))
    return a.read_bytes() != b.read_bytes() or (os.access(a, os.X_OK) != os.access(b, os.X_OK))
