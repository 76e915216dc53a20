"""A candidate as a task folder in our task format, which ``run`` and ``check`` read directly.

    <id>/task.toml                 repo = the user's repository at the parent commit
    <id>/hidden/<path>             the commit's test files as it left them
    <id>/solution/solution.patch   the gold patch: the rest of the commit

Test files the agent edits are put back before grading (``restored``), as the prompt promises:
editing a test is allowed, so it is no tamper finding, but it never counts. The list holds the
test folders plus the test files and settings of the runners the repository has at the parent
commit (see :mod:`harnessdrive.mining.runners`), grouped under a comment per runner. The
grader's own tamper checks (a planted conftest.py, interpreter hooks, fake reports) still apply.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w

from harnessdrive.errors import HarnessdriveError
from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.change_kind import change_kind, gold_contents
from harnessdrive.mining.classify import TEST_FOLDER_GLOBS
from harnessdrive.mining.contents import gold_patch, hidden_test_contents, read_blobs
from harnessdrive.mining.gitread import run_git
from harnessdrive.mining.prompt import agent_prompt
from harnessdrive.mining.runners import MANIFEST_NAMES, select_runners
from harnessdrive.tasks.loading import SOLUTION_PATCH, TASK_FILE
from harnessdrive.workspace.placing import write_file


@dataclass(frozen=True)
class TaskSettings:
    """What every mined task of one suite shares."""

    test_command: str
    setup_command: str | None
    test_timeout: float
    test_command_source: str = ""
    shared: tuple[str, ...] = ()
    """Folders the setup command reads (the suite's shared environments)."""
    setup_network: bool = False
    """Setup may reach the package registries (``[setup] network = "host"``)."""


def write_task_folder(
    folder: Path,
    repo: Path,
    candidate: Candidate,
    settings: TaskSettings,
    *,
    request: str | None = None,
    notes: Mapping[str, object] | None = None,
    kind: bool = True,
) -> Path:
    """Write the task folder for ``candidate`` (``folder`` must not exist yet).

    ``request`` replaces the commit message as the change request (a rewritten prompt; the
    message is kept in the metadata); ``notes`` go into the metadata as they are. ``kind``
    False leaves ``metadata.change_kind`` to :func:`record_change_kind`: validation writes it
    only for a commit its fast check leaves standing (parsing the commit's files costs more
    than the rest of the folder)."""
    (folder / "hidden").mkdir(parents=True)
    removed: list[str] = []
    for path, content in hidden_test_contents(repo, candidate).items():
        if content is None:
            removed.append(path)
        else:
            write_file(folder / "hidden", path, content)
    (folder / "solution").mkdir()
    (folder / "solution" / SOLUTION_PATCH).write_bytes(gold_patch(repo, candidate))
    groups = restore_groups(repo, candidate.parent, settings.test_command)
    data = task_data(repo, candidate, settings, removed, groups)
    if kind:
        data["metadata"]["change_kind"] = change_kind(candidate, gold_contents(repo, candidate))
    if request is not None:
        data["prompt"] = agent_prompt(request, "", settings.test_command)
        data["metadata"]["original_request"] = candidate.subject + (
            f"\n\n{candidate.body}" if candidate.body else ""
        )
    if notes:
        data["metadata"].update(notes)
    (folder / TASK_FILE).write_text(render_task_toml(data, groups), encoding="utf-8")
    return folder


def record_change_kind(folder: Path, repo: Path, candidate: Candidate) -> None:
    """Add ``metadata.change_kind`` to the task written in ``folder`` without it, as the first
    key of its metadata table; every other line stays as it is."""
    path = folder / TASK_FILE
    text = path.read_text(encoding="utf-8")
    line = tomli_w.dumps({"change_kind": change_kind(candidate, gold_contents(repo, candidate))})
    expected = tomllib.loads(text)
    expected["metadata"] = {**tomllib.loads(line), **expected["metadata"]}
    # The table's own header (a commit message in the prompt may hold the same line).
    for header in re.compile(r"^\[metadata\]\n", re.MULTILINE).finditer(text):
        changed = text[: header.end()] + line + text[header.end() :]
        with contextlib.suppress(ValueError):
            if tomllib.loads(changed) == expected:
                path.write_text(changed, encoding="utf-8")
                return
    raise HarnessdriveError(f"{path} is not as mining wrote it")


def retime_task_file(folder: Path, seconds: float) -> bool:
    """Give the task written in ``folder`` the test time limit ``seconds``, changing only that
    line of its task.toml (a limit derived after it was written); False when the file is not as
    :func:`write_task_folder` writes it, and nothing changed."""
    path = folder / TASK_FILE
    try:
        text = path.read_text(encoding="utf-8")
        before = tomllib.loads(text)
    except (OSError, ValueError):
        return False
    start = text.find("\n[grade]\n")
    if start == -1:
        return False
    before["grade"]["timeout"] = seconds
    new_line = tomli_w.dumps({"timeout": seconds}).rstrip("\n")
    # The first such line that is the table's own key (a multi-line command may hold one too).
    for line in re.compile(r"^timeout = [^\n]*$", re.MULTILINE).finditer(text, start + 1):
        changed = text[: line.start()] + new_line + text[line.end() :]
        try:
            if tomllib.loads(changed) != before:
                continue
        except ValueError:
            continue
        path.write_text(changed, encoding="utf-8")
        return True
    return False


RestoreGroups = tuple[tuple[str, tuple[str, ...]], ...]
"""``(heading, globs)`` pairs: what a mined task restores, and why."""

_MAX_MANIFESTS = 50


def restore_groups(repo: Path, commit: str, test_command: str) -> RestoreGroups:
    """The test folders, then each runner the repository has at ``commit`` with its globs."""
    listing = run_git(repo, ["ls-tree", "-r", "-z", "--full-tree", commit])
    paths: list[str] = []
    manifests: list[tuple[int, str, str]] = []  # (depth, path, blob)
    for entry in listing.split(b"\0"):
        if b"\t" not in entry:
            continue
        header, raw_path = entry.split(b"\t", 1)
        path = os.fsdecode(raw_path)
        paths.append(path)
        kind, blob = header.split()[1:3]
        parts = path.split("/")
        if kind == b"blob" and parts[-1] in MANIFEST_NAMES and "node_modules" not in parts:
            manifests.append((len(parts), path, blob.decode()))
    manifests.sort()
    blobs = read_blobs(repo, [blob for _, _, blob in manifests[:_MAX_MANIFESTS]])
    texts = [content.decode("utf-8", "replace") for content in blobs.values()]
    groups: list[tuple[str, tuple[str, ...]]] = [("test folders", TEST_FOLDER_GLOBS)]
    listed = set(TEST_FOLDER_GLOBS)
    for runner in select_runners(paths, test_command=test_command, manifests=texts):
        fresh = tuple(g for g in (*runner.test_files, *runner.settings) if g not in listed)
        listed.update(fresh)
        if fresh:
            groups.append((runner.name, fresh))
    return tuple(groups)


def render_task_toml(data: dict[str, Any], groups: RestoreGroups) -> str:
    """``task.toml`` text; ``grade.restored`` is written by hand to carry a comment per group."""
    head = {key: value for key, value in data.items() if key != "metadata"}
    head["grade"] = {k: v for k, v in data["grade"].items() if k != "restored"}
    lines = ["restored = ["]
    for heading, globs in groups:
        lines.append(f"    # {heading}")
        lines.extend(f"    {json.dumps(glob)}," for glob in globs)
    lines.append("]")
    text = tomli_w.dumps(head, multiline_strings=True) + "\n".join(lines) + "\n"
    if "metadata" in data:
        text += "\n" + tomli_w.dumps({"metadata": data["metadata"]}, multiline_strings=True)
    return text


def task_data(
    repo: Path,
    candidate: Candidate,
    settings: TaskSettings,
    removed: list[str],
    groups: RestoreGroups,
) -> dict[str, Any]:
    grade: dict[str, Any] = {
        "kind": "tests",
        "command": settings.test_command,
        "timeout": settings.test_timeout,
        "restored": [glob for _, globs in groups for glob in globs],
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
        "committed": candidate.committed,
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
    if settings.setup_network:
        table["network"] = "host"
    return table


def write_suite_task(
    folder: Path, settings: TaskSettings, *, name: str, prompt: str, repo: Path, ref: str
) -> None:
    """A task in ``folder`` that only sets up and runs the suite at ``ref``: HEAD check, sample."""
    data: dict[str, Any] = {
        "id": name,
        "prompt": prompt,
        "repo": {"path": str(repo), "ref": ref},
        "grade": {"command": settings.test_command, "timeout": settings.test_timeout},
    }
    if settings.setup_command:
        data["setup"] = setup_table(settings)
    folder.mkdir(parents=True)
    (folder / TASK_FILE).write_text(tomli_w.dumps(data), encoding="utf-8")


def _is_text(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(path: str) -> str:
    """A file name for reading: bytes that are not UTF-8 shown as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")
