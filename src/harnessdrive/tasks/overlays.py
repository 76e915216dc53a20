"""The reference overlays of an improvement task, applied one per round."""

from __future__ import annotations

import shutil
from pathlib import Path

from harnessdrive.tasks.loading import Task


def overlay_folders(task: Task) -> tuple[Path, ...]:
    spec = task.spec.improve
    return tuple(task.folder / each for each in spec.overlays) if spec is not None else ()


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def in_place(folder: Path, workspace: Path) -> bool:
    """Whether every file of the overlay is already in ``workspace`` as the overlay has it."""
    for path in _files(folder):
        there = workspace / path.relative_to(folder)
        if not there.is_file() or there.read_bytes() != path.read_bytes():
            return False
    return True


def apply_next_overlay(task: Task, workspace: Path) -> list[str]:
    """Copy the overlay after the last one in place (the first when none is) into
    ``workspace``; the paths it wrote (none once the last is in place)."""
    folders = overlay_folders(task)
    placed = [n for n, folder in enumerate(folders) if in_place(folder, workspace)]
    following = placed[-1] + 1 if placed else 0
    if following >= len(folders):
        return []
    return lay_over(folders[following], workspace)


def lay_over(folder: Path, workspace: Path) -> list[str]:
    """Copy every file of ``folder`` into ``workspace``; the paths it wrote."""
    written = []
    for path in _files(folder):
        rel = path.relative_to(folder)
        target = workspace / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()  # never write through a link
        shutil.copyfile(path, target)
        written.append(rel.as_posix())
    return written
