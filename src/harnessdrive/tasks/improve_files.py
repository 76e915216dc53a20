"""The files an ``[improve]`` table names: checked when the task loads, kept from the agent and
hashed into the task's fingerprint."""

from __future__ import annotations

import hashlib
import os
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
    for overlay in improve.reference_folders:
        if not (folder / overlay).is_dir():
            raise TaskFormatError(f"{task_file}: improve overlay folder not found: {overlay}")


def improve_sources(folder: Path, spec: TaskSpec) -> tuple[Path, ...]:
    """The objective's files and the reference overlays, resolved: what no agent may see (they
    may lie outside the task folder) and what defines the task as much as its hidden tests."""
    improve = spec.improve
    if improve is None:
        return ()
    files = [(folder / item.source).resolve() for item in improve.objective.inject]
    return (*files, *((folder / overlay).resolve() for overlay in improve.reference_folders))


def improve_digest(folder: Path, spec: TaskSpec) -> bytes:
    """A hash of every objective file (with where it is injected) and every overlay's files,
    so an edited objective or overlay changes the task's fingerprint."""
    digest = hashlib.sha256()
    improve = spec.improve
    if improve is None:
        return b""
    for item in improve.objective.inject:
        digest.update(f"\0objective\0{item.target}\0".encode())
        digest.update((folder / item.source).read_bytes())
    for overlay in improve.reference_folders:
        root = folder / overlay
        digest.update(f"\0overlay\0{overlay}\0".encode())
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(os.fsencode(path.relative_to(root).as_posix()) + b"\0")
                digest.update(path.read_bytes())
    return digest.digest()
