"""Running a Harbor folder directly: ``harnessdrive run PATH`` where PATH is a Harbor task,
dataset folder or ``dataset.toml``. It is imported once into a suite kept in
``${XDG_CACHE_HOME:-~/.cache}/harnessdrive/harbor-suites`` (named by a hash of the Harbor
files), and that suite runs; it is imported again whenever a file of it changes."""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Callable
from pathlib import Path

from harnessdrive.harbor.importer import ImportOptions, harbor_task_folders, import_harbor


def is_harbor_task(folder: Path) -> bool:
    """A folder with a Harbor ``task.toml`` (a ``[task]`` table or ``schema_version``, no
    ``id``) and an ``instruction.md``."""
    task_file = folder / "task.toml"
    if not (task_file.is_file() and (folder / "instruction.md").is_file()):
        return False
    try:
        data = tomllib.loads(task_file.read_text(errors="replace"))
    except (OSError, tomllib.TOMLDecodeError):
        return False
    return "id" not in data and ("task" in data or "schema_version" in data)


def is_harbor_path(path: Path) -> bool:
    if path.is_file():
        return path.name == "dataset.toml"
    if not path.is_dir() or (path / "suite.toml").is_file():
        return False
    if is_harbor_task(path) or (path / "dataset.toml").is_file():
        return True
    try:
        return any(is_harbor_task(p) for p in path.iterdir() if p.is_dir())
    except OSError:
        return False


def suite_folder(path: Path, warn: Callable[[str], None]) -> Path:
    """``path`` itself when it is not Harbor's; else the suite imported from it."""
    if not is_harbor_path(path):
        return path
    _, folders = harbor_task_folders(path)
    out = _suites_folder() / _files_key(path.resolve(), folders)
    stamp = out / ".imported"
    if not stamp.is_file():
        report = import_harbor(path, out, ImportOptions())
        for line in report.refused:
            warn(f"skipped {line}")
        stamp.write_text("\n".join(report.refused) + "\n")
    else:
        for line in stamp.read_text().splitlines():
            if line:
                warn(f"skipped {line}")
    return out


def _suites_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "harnessdrive" / "harbor-suites"


def _files_key(path: Path, folders: list[Path]) -> str:
    digest = hashlib.sha256(os.fsencode(path))
    for folder in sorted(folders):
        for current, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(current, name)
                try:
                    info = os.stat(full)
                except OSError:
                    continue
                digest.update(f"{full}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:20]
