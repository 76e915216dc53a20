"""The demo with real agent CLIs: each one works against a scripted model that solves the task.

``harnessdrive demo --harness claude,codex`` starts the scripted model server on 127.0.0.1,
serves one script per variant and task (the task's reference solution turned into file writes
and edits, then the task's visible test command, then a closing answer) and points each CLI at it
through its ``endpoint`` option. No key and no network are needed; the CLIs do everything else
for real, so their tools, logs and usage reporting are what a real run would show.

The scripted model server is a test double (``harnessdrive.testing.model_server``); the demo is
the one command that puts it in front of users, which is why this module imports it.

Every call is recorded with the provider ``scripted`` and the ids in :data:`DEMO_MODELS`; those
are priced at zero by :func:`scripted_prices`, so the demo needs no price of a real model and no
spend cap.
"""

from __future__ import annotations

import re
import shlex
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessdrive.accounting.price_overrides import parse_row
from harnessdrive.accounting.price_records import PriceRecord, PriceSource
from harnessdrive.errors import UserError
from harnessdrive.sandbox.commands import render
from harnessdrive.tasks.loading import Suite, Task
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.tasks.overlays import overlay_folders
from harnessdrive.testing.model_server import (
    Action,
    EditFile,
    ModelServer,
    Script,
    Shell,
    Turn,
    Usage,
    WriteFile,
)
from harnessdrive.workspace.git import git
from harnessdrive.workspace.snapshot import build_snapshot
from harnessdrive.workspace.solution import solution_files

SCRIPTED_PROVIDER = "scripted"
SCRIPTED_MODEL = "harnessdrive-scripted"
# Model ids each CLI gets. Codex offers its apply_patch tool only for a model it knows; Claude
# Code and Gemini CLI are given ids of their own vendors. All are priced at zero (below).
DEMO_MODELS: dict[str, str] = {
    "claude": "claude-sonnet-4-5",
    "codex": "gpt-5.5",
    "gemini": "gemini-2.5-flash",
}
# aider edits by answer text (SEARCH/REPLACE blocks) in the files added to its chat, and runs
# the visible tests itself, because it never runs a command the model suggests.
DEMO_OPTIONS: dict[str, dict[str, Any]] = {
    "aider": {"edit_format": "diff", "auto_test": True, "files": "all"}
}
REAL_CLIS = ("claude", "codex", "gemini", "opencode", "pi", "qwen", "aider", "mini-swe-agent")
# Usage reported for each scripted turn: small, fixed, in every tier, so totals are checkable.
TURN_USAGE = Usage(input=1200, cache_read=800, cache_write=300, output=150, reasoning=40)


@dataclass(frozen=True)
class FileEdit:
    """One file the reference solution changes, as the model will be scripted to change it."""

    path: str
    actions: tuple[Action, ...]


def model_for(harness: str) -> str:
    return DEMO_MODELS.get(harness, SCRIPTED_MODEL)


def scripted_prices(models: Sequence[str] | None = None) -> tuple[PriceRecord, ...]:
    """Zero prices for the demo's model ids under the ``scripted`` provider."""
    source = PriceSource(name="harnessdrive demo (scripted model, free)")
    ids = sorted(set(models or (*DEMO_MODELS.values(), SCRIPTED_MODEL)))
    return tuple(
        parse_row({"provider": SCRIPTED_PROVIDER, "model": model, "input": 0, "output": 0}, source)
        for model in ids
    )


def solution_edits(task: Task) -> tuple[FileEdit, ...]:
    """The task's reference solution as write and edit actions, checked to reproduce it."""
    if task.solution is None:
        raise UserError(f"task {task.id} has no reference solution to script the demo model with")
    overlay = task.solution.overlay
    if overlay is not None:  # a folder of whole files (a differential task's solution)
        return _overlay_edits(task, overlay)
    assert task.solution.patch is not None
    with tempfile.TemporaryDirectory(prefix="harnessdrive-demo-") as scratch:
        snapshot = build_snapshot(task.repo_path, task.spec.repo.ref, Path(scratch) / "snap")
        root = snapshot.root
        before = {rel: _read(root / rel) for rel in solution_files(task)}
        git("apply", "--whitespace=nowarn", str(task.solution.patch), cwd=root)
        after = {rel: _read(root / rel) for rel in before}
    hunks = _hunks(task.solution.patch.read_text(encoding="utf-8"))
    return tuple(
        FileEdit(rel, _actions(rel, before[rel], after[rel], hunks.get(rel, []))) for rel in before
    )


def _overlay_edits(task: Task, overlay: Path) -> tuple[FileEdit, ...]:
    # A file the overlay replaces is one edit of its whole text: aider, which edits by answer
    # text, would otherwise append a written file to the one already there.
    files = {
        path.relative_to(overlay).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(overlay.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }
    with tempfile.TemporaryDirectory(prefix="harnessdrive-demo-") as scratch:
        snapshot = build_snapshot(task.repo_path, task.spec.repo.ref, Path(scratch) / "snap")
        before = {rel: _read(snapshot.root / rel) for rel in files}
    return tuple(
        FileEdit(rel, _actions(rel, before[rel], after, [(before[rel] or "", after)]))
        for rel, after in files.items()
    )


# Applies the overlay after the last one in place (the first when none is), as the built-in
# reference agent does: the model server answers from the conversation alone, and every round
# of an improvement task starts a new one, so the one script must serve every round.
_NEXT_OVERLAY = """import pathlib
overlays = {overlays!r}
def placed(files):
    return all(pathlib.Path(p).is_file() and pathlib.Path(p).read_text() == c
               for p, c in files.items())
done = [n for n, files in enumerate(overlays) if placed(files)]
following = done[-1] + 1 if done else 0
for path, content in (overlays[following] if following < len(overlays) else {{}}).items():
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(path).write_text(content)
"""


def improving_script(task: Task, python: str) -> Script:
    """A script for each round of an improvement task: the next reference overlay, an answer."""
    overlays = [
        {
            path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(folder.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts
        }
        for folder in overlay_folders(task)
    ]
    program = _NEXT_OVERLAY.format(overlays=overlays)
    command = f"{shlex.quote(python)} -c {shlex.quote(program)}"
    return Script(
        turns=(
            Turn(
                text="Applying the next improvement.",
                actions=(Shell(command=command),),
                usage=TURN_USAGE,
            ),
            Turn(text="Done: the next improvement is in place.", usage=TURN_USAGE),
        )
    )


def solving_script(task: Task, harness: str, python: str) -> Script:
    """A script that solves ``task``: edits, the visible tests, an answer."""
    if task.spec.improve is not None:
        return improving_script(task, python)
    edits = solution_edits(task)
    paths = ", ".join(edit.path for edit in edits)
    actions = tuple(action for edit in edits for action in edit.actions)
    answer = Turn(text=f"Done: the change to {paths} is in place.", usage=TURN_USAGE)
    command = task.spec.grade.visible_test_command
    if harness == "aider":
        # aider has every file in its chat (DEMO_OPTIONS) and runs the tests itself.
        return Script(
            turns=(Turn(text="Here is the change.", actions=actions, usage=TURN_USAGE), answer)
        )
    turns = [Turn(text=f"Changing {paths}.", actions=actions, usage=TURN_USAGE)]
    if command:
        shell = render(command, {"python": python})
        turns.append(
            Turn(text="Running the tests.", actions=(Shell(command=shell),), usage=TURN_USAGE)
        )
    return Script(turns=(*turns, answer))


@contextmanager
def scripted_demo(
    suite: Suite, harnesses: Sequence[str], python: str
) -> Iterator[tuple[VariantSpec, ...]]:
    """Serve a solving script per harness and task; yields the variants pointed at them."""
    with ModelServer() as server:
        for harness in harnesses:
            for task in suite.tasks:
                server.mount(_mount(harness, task.id), solving_script(task, harness, python))
        base = server.base_url
        variants = tuple(
            VariantSpec(
                harness=harness,
                name=harness,
                model=model_for(harness),
                options={
                    "endpoint": {
                        "anthropic": f"{base}/s/{harness}.{{task}}",
                        "openai": f"{base}/s/{harness}.{{task}}/v1",
                        "gemini": f"{base}/s/{harness}.{{task}}",
                        "provider": SCRIPTED_PROVIDER,
                        "max_retries": 0,
                    },
                    **DEMO_OPTIONS.get(harness, {}),
                },
            )
            for harness in harnesses
        )
        yield variants


def _mount(harness: str, task_id: str) -> str:
    return f"{harness}.{task_id}"


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _actions(
    path: str, before: str | None, after: str | None, hunks: list[tuple[str, str]]
) -> tuple[Action, ...]:
    if after is None:
        return (Shell(command=f"rm -f -- '{path}'"),)
    if before is None:
        return (WriteFile(path=path, content=after),)
    edits: list[Action] = []
    text = before
    for old, new in hunks:
        if not old or text.count(old) != 1:
            # An edit the tools would refuse as ambiguous: write the whole file instead.
            return (WriteFile(path=path, content=after),)
        text = text.replace(old, new, 1)
        edits.append(EditFile(path=path, old=old, new=new))
    if text != after:
        return (WriteFile(path=path, content=after),)
    return tuple(edits)


def _hunks(patch: str) -> dict[str, list[tuple[str, str]]]:
    """(old text, new text) of each hunk of a unified diff, by the file it changes."""
    found: dict[str, list[tuple[str, str]]] = {}
    target: list[tuple[str, str]] = []
    lines = patch.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.startswith("+++ "):
            name = line[4:].strip()
            target = found.setdefault(name[2:] if name.startswith("b/") else name, [])
            continue
        header = _HUNK.match(line)
        if header is None:
            continue
        old_left = int(header.group(2) or 1)
        new_left = int(header.group(4) or 1)
        old: list[str] = []
        new: list[str] = []
        while (old_left or new_left) and index < len(lines):
            body = lines[index]
            index += 1
            if body.startswith("\\"):
                continue
            kind, text = body[:1], body[1:]
            if kind in (" ", "-"):
                old.append(text)
                old_left -= 1
            if kind in (" ", "+"):
                new.append(text)
                new_left -= 1
        # "\ No newline at end of file" after the last line: the check in _actions notices.
        target.append(("".join(old), "".join(new)))
    return found


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
