"""The files an ``[improve]`` table names, checked when the task loads."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.errors import TaskFormatError
from harnessdrive.tasks.models import TaskSpec


def check_improve_files(folder: Path, spec: TaskSpec, task_file: Path) -> None:
    """Every objective file and reference overlay exists (one-line error otherwise)."""
    improve = spec.improve
    if improve is None:
        return
    for item in improve.objective.inject:
        if not (folder / item.source).is_file():
            raise TaskFormatError(f"{task_file}: objective file not found: {item.source}")
    for overlay in improve.overlays:
        if not (folder / overlay).is_dir():
            raise TaskFormatError(f"{task_file}: improve overlay folder not found: {overlay}")
