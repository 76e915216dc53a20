"""A task's reference solution or a self-test fixture, applied to a copy of the repository."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from harnessdrive.errors import WorkspaceError
from harnessdrive.tasks.loading import Solution, Task
from harnessdrive.workspace.git import git

_PATCH_TARGET = re.compile(r"^\+\+\+ b/(.+?)\s*$", re.MULTILINE)


def apply_solution(task: Task, workspace: Path) -> list[str]:
    """Apply a task's reference solution to a workspace; returns the files it touched."""
    if task.solution is None:
        raise WorkspaceError(f"task {task.id} has no reference solution")
    return apply_change(task.solution, workspace)


def apply_change(change: Solution, workspace: Path) -> list[str]:
    """Apply a patch or overlay (a solution or a self-test fixture); the files it touched."""
    if change.patch is not None:
        git("apply", "--whitespace=nowarn", str(change.patch), cwd=workspace)
        text = change.patch.read_text(encoding="utf-8", errors="replace")
        return list(dict.fromkeys(_PATCH_TARGET.findall(text)))
    assert change.overlay is not None
    touched = []
    for path in sorted(change.overlay.rglob("*")):
        if path.is_file():
            rel = path.relative_to(change.overlay).as_posix()
            (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, workspace / rel)
            touched.append(rel)
    return touched


def solution_files(task: Task) -> list[str]:
    """Files the reference solution changes, in its order."""
    solution = task.solution
    if solution is None:
        return []
    if solution.patch is not None:
        text = solution.patch.read_text(encoding="utf-8", errors="replace")
        return list(dict.fromkeys(_PATCH_TARGET.findall(text)))
    assert solution.overlay is not None
    overlay = solution.overlay
    return sorted(p.relative_to(overlay).as_posix() for p in overlay.rglob("*") if p.is_file())
