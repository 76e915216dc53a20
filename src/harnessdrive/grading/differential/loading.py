"""The task's own callables (oracle, generator): ``path/file.py:name`` under the task folder."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harnessdrive.errors import TaskFormatError

_LOADED: dict[tuple[str, str], Callable[..., Any]] = {}


def task_callable(folder: Path, reference: str, what: str) -> Callable[..., Any]:
    """The function ``reference`` names, loaded from a file of the task folder ``folder``."""
    file_part, _, name = reference.rpartition(":")
    path = (folder / file_part).resolve()
    if not path.is_relative_to(folder.resolve()) or not path.is_file():
        raise TaskFormatError(f"{what} {reference!r}: no file {file_part!r} in the task folder")
    key = (str(path), name)
    if key not in _LOADED:
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
        module_name = f"_harnessdrive_task_{digest}_{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise TaskFormatError(f"{what} {reference!r}: cannot load {file_part!r}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        function = getattr(module, name, None)
        if not callable(function):
            raise TaskFormatError(f"{what} {reference!r}: {file_part!r} has no function {name!r}")
        _LOADED[key] = function
    return _LOADED[key]
