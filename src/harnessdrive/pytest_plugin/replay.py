"""Replay a stored cell: its metrics and price derived again from the stored transcript (the
record bound to the CLI's session log) and the price book, and its final workspace (the base
state plus the stored ``diff.patch``) graded again by the task's grader. No agent starts and
nothing is spent.

A cell's trial folder holds ``cell.json``: the task folder, repository and prompt it ran, so a
replay builds the same task.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from harnessdrive.accounting import PriceBook, to_usd
from harnessdrive.errors import UserError
from harnessdrive.executors.base import TrialJob, WorkerSettings
from harnessdrive.executors.registry import create_executor
from harnessdrive.protocols.known_change import KnownChange
from harnessdrive.sandbox.runner import SandboxKind
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import Task, load_task
from harnessdrive.tasks.models import RepoSpec
from harnessdrive.transcript.models import Transcript, Usage
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.git import git
from harnessdrive.workspace.snapshot import build_snapshot

CELL_FILE = "cell.json"


def write_cell_file(folder: Path, task: Task) -> None:
    """What a replay needs to build the cell's task again."""
    data = {"task_folder": str(task.folder), "repo": str(task.repo_path), "prompt": task.prompt}
    (folder / CELL_FILE).write_text(json.dumps(data, indent=2) + "\n")


@dataclass(frozen=True)
class Replayed:
    stored: TrialResult
    usage: Usage
    turns: int
    tool_calls: int
    usd: float | None
    """The run priced again from its calls, on the day it was priced then."""
    grader_outcome: str
    """The task grader's verdict on the stored final workspace, graded again."""

    @property
    def stored_grader_outcome(self) -> str | None:
        grading = self.stored.grading
        return grading.outcome if grading is not None else None


def replay(
    folder: Path, *, price_files: tuple[Path, ...] = (), sandbox: SandboxKind = "auto"
) -> Replayed:
    result_file = folder / "result.json"
    if not result_file.is_file():
        raise UserError(f"no result.json in {folder}: not a recorded trial")
    stored = TrialResult.model_validate_json(result_file.read_text())
    transcript = Transcript.model_validate_json((folder / "transcript.json").read_text())
    usage = sum((call.usage for call in transcript.calls), Usage())
    usd = None
    if transcript.calls:
        on = stored.cost.priced_on or date.fromisoformat(stored.started[:10])
        usd = to_usd(PriceBook.load(price_files).price(transcript.calls, on=on).priced_total)
    outcome = _grade_again(folder, stored, sandbox)
    return Replayed(
        stored=stored,
        usage=usage,
        turns=transcript.turns if transcript.turns is not None else len(transcript.calls),
        tool_calls=transcript.tool_calls,
        usd=usd,
        grader_outcome=outcome,
    )


def _task(folder: Path) -> Task:
    cell = folder / CELL_FILE
    if not cell.is_file():
        raise UserError(f"no {CELL_FILE} in {folder}: not a trial the pytest plugin recorded")
    data = json.loads(cell.read_text())
    task = load_task(Path(data["task_folder"]))
    repo = Path(data["repo"])
    if repo != task.repo_path:
        spec = task.spec.model_copy(update={"repo": RepoSpec(path=str(repo))})
        task = replace(task, spec=spec, repo_path=repo)
    return replace(task, prompt=data["prompt"])


def _grade_again(folder: Path, stored: TrialResult, sandbox: SandboxKind) -> str:
    task = _task(folder)
    with tempfile.TemporaryDirectory(prefix="harnessdrive-replay-") as scratch:
        snapshot = build_snapshot(task.repo_path, task.spec.repo.ref, Path(scratch) / "snap")
        workspace = Path(scratch) / "workspace"
        shutil.copytree(snapshot.root, workspace, symlinks=True)
        patch = folder / "diff.patch"
        if patch.is_file() and patch.stat().st_size:
            git("apply", "--whitespace=nowarn", "--binary", str(patch.resolve()), cwd=workspace)
        changes = capture_changes(snapshot, workspace)
        settings = WorkerSettings(sandbox=sandbox, hidden=(folder,), python=sys.executable)
        executor = create_executor("local", settings)
        try:
            job = TrialJob(
                key=f"replay-{stored.trial_id}",
                task=task,
                variant=stored.variant,
                harness=KnownChange(changes=changes, base=snapshot),
                identity=stored.model_copy(update={"status": "interrupted", "rounds": ()}),
            )
            done = executor.submit(job).result()
            shutil.rmtree(done.artifacts, ignore_errors=True)
        finally:
            executor.close()
    return done.result.outcome
