"""``cell.json`` in a cell's trial folder: the task folder, repository and prompt it ran, so a
replay builds the same task."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harnessdrive.tasks.loading import Task

CELL_FILE = "cell.json"


def write_cell_file(
    folder: Path, task: Task, case: str = "", parameters: Mapping[str, Any] | None = None
) -> None:
    """``case``: the case's function; ``parameters``: its parameter set's values, kept when
    they are plain JSON, so a failed case can be promoted into a case of its own later
    (:func:`harnessdrive.pytest_plugin.generators.promoted`)."""
    data: dict[str, Any] = {
        "task_folder": str(task.folder),
        "repo": str(task.repo_path),
        "prompt": task.prompt,
        "case": case,
    }
    if parameters:
        # Values that are not plain data are left out: such a case cannot be promoted.
        with contextlib.suppress(TypeError, ValueError):
            data["parameters"] = json.loads(json.dumps(dict(parameters)))
    (folder / CELL_FILE).write_text(json.dumps(data, indent=2) + "\n")
