"""``cell.json`` in a cell's trial folder: the task folder, repository and prompt it ran, so a
replay builds the same task."""

from __future__ import annotations

import json
from pathlib import Path

from harnessdrive.tasks.loading import Task

CELL_FILE = "cell.json"


def write_cell_file(folder: Path, task: Task) -> None:
    data = {"task_folder": str(task.folder), "repo": str(task.repo_path), "prompt": task.prompt}
    (folder / CELL_FILE).write_text(json.dumps(data, indent=2) + "\n")
