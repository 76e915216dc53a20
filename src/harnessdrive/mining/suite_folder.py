"""The folder a mining run writes: a suite that ``run`` and ``check`` take as it is.

    <suite>/suite.toml
    <suite>/tasks/<id>/...      one folder per kept task (see taskfiles)
    <suite>/envs/               shared test environments, reused by the next mining run
    <suite>/logs/               head-check.log, head-setup.log, one folder per checked commit
    <suite>/journal.jsonl       every checked commit's verdict, so a stopped run continues
    <suite>/mined.json          the summary as JSON; marks the folder as ours
    <suite>/summary.md          the summary as markdown

By default it lies in ``.harnessdrive/tasks/<repository name>`` inside the repository, and
``.harnessdrive`` ignores itself, so ``git status`` stays clean. A folder that exists and is not
one of ours is never written into.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import tomli_w

from harnessdrive.errors import UserError
from harnessdrive.mining.summary import (
    MiningSummary,
    render_summary_json,
    render_summary_markdown,
)
from harnessdrive.tasks.loading import SUITE_FILE

MARKER = "mined.json"
SUMMARY_MARKDOWN = "summary.md"
STATE_FOLDER = ".harnessdrive"
_NOT_ID = re.compile(r"[^A-Za-z0-9._-]+")


def default_suite_folder(repo: Path) -> Path:
    return repo / STATE_FOLDER / "tasks" / suite_name(repo)


def suite_name(repo: Path) -> str:
    """The repository's folder name as a suite name (letters, digits, ``._-``)."""
    name = _NOT_ID.sub("-", repo.name).strip("-._")[:100]
    return name or "mined"


def prepare_suite_folder(folder: Path) -> None:
    """Make ``folder`` ready to receive a suite: new, empty, or written by an earlier run."""
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder} is a file, not a folder for the mined suite")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / MARKER).is_file():
        raise UserError(
            f"{folder} already holds files that mining did not write; choose another -o folder"
        )
    if folder.parent.name == "tasks" and folder.parent.parent.name == STATE_FOLDER:
        _ignore_itself(folder.parent.parent)
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / MARKER
    if not marker.exists():
        marker.write_text("{}\n", encoding="utf-8")  # ours from now on, even if this run fails
    # The logs stay for a run that continues the journal (see journal.py); mining clears them
    # when it starts over.
    shutil.rmtree(folder / "staging", ignore_errors=True)


def _ignore_itself(state: Path) -> None:
    """``.harnessdrive/.gitignore`` with ``*``: nothing in it ever shows in ``git status``."""
    state.mkdir(parents=True, exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")


def write_suite(folder: Path, name: str, description: str, tasks: list[tuple[str, Path]]) -> None:
    """Move the kept task folders in (``(id, staged folder)``, newest first); replace old ones."""
    fresh = folder / "tasks.new"
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir()
    for task_id, staged in tasks:
        shutil.move(staged, fresh / task_id)
    shutil.rmtree(folder / "tasks", ignore_errors=True)
    fresh.rename(folder / "tasks")
    suite_file = folder / SUITE_FILE
    if tasks:
        data = {"name": name, "description": description, "tasks": ["tasks/*"]}
        suite_file.write_text(tomli_w.dumps(data), encoding="utf-8")
    else:
        suite_file.unlink(missing_ok=True)  # no task: nothing to run, so no suite


def write_summary(folder: Path, summary: MiningSummary) -> None:
    (folder / MARKER).write_text(render_summary_json(summary), encoding="utf-8")
    (folder / SUMMARY_MARKDOWN).write_text(render_summary_markdown(summary), encoding="utf-8")
