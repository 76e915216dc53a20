"""Write task and suite folders for tests, in a few lines each.

suite = write_suite(tmp_path, [
    TaskFiles("add", files={"calc.py": "def add(a, b):\n    return a - b\n"},
              hidden={"tests/test_add.py": "from calc import add\n..."},
              solution={"calc.py": "def add(a, b):\n    return a + b\n"}),
])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

# Plugins installed next to the test runner (xdist, hypothesis, ...) add start-up time and
# nothing else to these small checks.
FAST_PYTEST = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -m pytest -q -p no:cacheprovider"


@dataclass
class TaskFiles:
    id: str
    files: Mapping[str, str] = field(default_factory=dict)
    """The repository's starting files."""
    hidden: Mapping[str, str] = field(default_factory=dict)
    """Hidden files by their target path."""
    solution: Mapping[str, str] | None = None
    """Files of the reference solution (an overlay), or None for no solution."""
    command: str = FAST_PYTEST
    visible_command: str | None = None
    protected: Sequence[str] = ()
    prompt: str = "Make the tests pass."
    agent_timeout: float = 60
    grade_timeout: float = 60
    setup: Sequence[str] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    """More top-level keys or sections for task.toml."""


def write_task(parent: Path, task: TaskFiles) -> Path:
    """Write ``parent/<id>/`` with task.toml, repo/, hidden/ and solution/."""
    folder = parent / task.id
    _write_tree(folder / "repo", task.files)
    _write_tree(folder / "hidden", task.hidden)
    if task.solution is not None:
        _write_tree(folder / "solution", task.solution)
    grade: dict[str, Any] = {"command": task.command, "timeout": task.grade_timeout}
    if task.visible_command:
        grade["visible_command"] = task.visible_command
    if task.protected:
        grade["protected"] = list(task.protected)
    data: dict[str, Any] = {
        "id": task.id,
        "title": f"Task {task.id}",
        "prompt": task.prompt,
        "repo": {"path": "repo"},
        "grade": grade,
        "limits": {"agent_timeout": task.agent_timeout},
    }
    if task.setup:
        data["setup"] = {"commands": list(task.setup)}
    for key, value in task.extra.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    (folder / "task.toml").write_text(tomli_w.dumps(data))
    return folder


def write_suite(
    parent: Path,
    tasks: Sequence[TaskFiles],
    *,
    name: str = "suite",
    variants: Sequence[str | Mapping[str, Any]] = (),
) -> Path:
    """Write a suite folder holding ``tasks/<id>/`` for each task."""
    folder = parent / name
    for task in tasks:
        write_task(folder / "tasks", task)
    data: dict[str, Any] = {"name": name, "tasks": ["tasks/*"]}
    if variants:
        data["variants"] = [dict(v) if isinstance(v, Mapping) else v for v in variants]
    (folder / "suite.toml").write_text(tomli_w.dumps(data))
    return folder


def _write_tree(root: Path, files: Mapping[str, str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
