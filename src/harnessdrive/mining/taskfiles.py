"""A candidate as a task folder in our task format, which ``run`` and ``check`` read directly.

    <id>/task.toml                 repo = the user's repository at the parent commit
    <id>/hidden/<path>             the commit's test files as it left them
    <id>/solution/solution.patch   the gold patch: the rest of the commit

Test files the agent edits are put back before grading (``restored``), as the prompt promises:
editing a test is allowed, so it is no tamper finding, but it never counts. The grader's own
tamper checks (a planted conftest.py, interpreter hooks, fake reports) still apply.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.classify import TEST_GLOBS
from harnessdrive.mining.contents import gold_patch, hidden_test_contents
from harnessdrive.tasks.loading import SOLUTION_PATCH, TASK_FILE
from harnessdrive.workspace.materialize import write_file


@dataclass(frozen=True)
class TaskSettings:
    """What every mined task of one suite shares."""

    test_command: str
    setup_command: str | None
    test_timeout: float
    test_command_source: str = ""
    shared: tuple[str, ...] = ()
    """Folders the setup command reads (the suite's shared environments)."""


def write_task_folder(
    folder: Path, repo: Path, candidate: Candidate, settings: TaskSettings
) -> Path:
    """Write the task folder for ``candidate`` (``folder`` must not exist yet)."""
    (folder / "hidden").mkdir(parents=True)
    removed: list[str] = []
    for path, content in hidden_test_contents(repo, candidate).items():
        if content is None:
            removed.append(path)
        else:
            write_file(folder / "hidden", path, content)
    (folder / "solution").mkdir()
    (folder / "solution" / SOLUTION_PATCH).write_bytes(gold_patch(repo, candidate))
    data = task_data(repo, candidate, settings, removed)
    (folder / TASK_FILE).write_text(tomli_w.dumps(data, multiline_strings=True), encoding="utf-8")
    return folder


def task_data(
    repo: Path, candidate: Candidate, settings: TaskSettings, removed: list[str]
) -> dict[str, Any]:
    grade: dict[str, Any] = {
        "command": settings.test_command,
        "timeout": settings.test_timeout,
        "restored": list(TEST_GLOBS),
    }
    # A deleted test whose name is not UTF-8 cannot be written in TOML; it stays in the copy.
    removed = [path for path in removed if _is_text(path)]
    if removed:
        grade["removed"] = removed
    data: dict[str, Any] = {
        "id": candidate.id,
        "title": candidate.subject,
        "prompt": candidate.prompt(settings.test_command),
        "repo": {"path": str(repo), "ref": candidate.parent},
    }
    if settings.setup_command:
        data["setup"] = setup_table(settings)
    data["grade"] = grade
    data["metadata"] = {
        "mined": True,
        "commit": candidate.commit,
        "parent": candidate.parent,
        "hidden_tests": [_printable(p) for p in candidate.hidden_tests],
        "gold_files": [_printable(p) for p in candidate.gold_files],
        "gold_lines": candidate.gold_lines,
        "changes_dependencies": candidate.changes_dependencies,
        "test_cmd_source": settings.test_command_source,
    }
    return data


def setup_table(settings: TaskSettings) -> dict[str, Any]:
    """The ``[setup]`` table of every task mined with ``settings``."""
    table: dict[str, Any] = {"commands": [settings.setup_command]}
    if settings.shared:
        table["shared"] = list(settings.shared)
    return table


def _is_text(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(path: str) -> str:
    """A file name for reading: bytes that are not UTF-8 shown as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")
