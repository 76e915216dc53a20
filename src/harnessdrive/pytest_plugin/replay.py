"""Replay a stored cell: its transcript derived again from the CLI's own stored stdout and
session logs (by the CLI's adapter, :mod:`harnessdrive.harnesses.cli.stored_logs`), its metrics
and price from that transcript and the current price records (on the day it ran), and its
final workspace rebuilt (the base state plus the stored ``diff.patch``), graded again when
asked. No agent starts and nothing is spent.

A cell's trial folder holds ``cell.json``: the task folder, repository and prompt it ran, so a
replay builds the same task.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from harnessdrive.accounting import PriceBook
from harnessdrive.errors import UserError
from harnessdrive.executors.registry import create_executor
from harnessdrive.harnesses.base import Harness
from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.registry import get_harness
from harnessdrive.protocols.known_change import KnownChange
from harnessdrive.pytest_plugin.cell_file import CELL_FILE
from harnessdrive.sandbox.runner import SandboxKind
from harnessdrive.store.results import Cost, Totals, TrialResult
from harnessdrive.tasks.loading import Task, load_task
from harnessdrive.tasks.models import RepoSpec
from harnessdrive.transcript.models import Transcript, Usage
from harnessdrive.trial.job import TrialJob, WorkerSettings
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.git import git
from harnessdrive.workspace.snapshot import Snapshot, build_snapshot

if TYPE_CHECKING:
    from harnessdrive.harnesses.cli.stored_logs import StoredRun


@dataclass(frozen=True)
class Replayed:
    stored: TrialResult
    transcript: Transcript
    """Derived again from the CLI's stored stdout and session logs (``source``)."""
    source: str
    """``session log``: re-read by the CLI's adapter; ``transcript``: a harness that keeps no
    raw log of its own (a scripted agent), whose stored transcript is its record."""
    cost: Cost
    """The run priced again from its calls with the current price records, on the day it ran."""
    grader_outcome: str
    """The task grader's verdict: the stored one, or graded again when asked."""
    task: Task
    """The task as the trial stored it."""

    @property
    def usage(self) -> Usage:
        return self.transcript.usage

    @property
    def turns(self) -> int:
        turns = self.transcript.turns
        return turns if turns is not None else len(self.transcript.calls)

    @property
    def tool_calls(self) -> int:
        return self.transcript.tool_calls

    @property
    def usd(self) -> float | None:
        return self.cost.usd

    @property
    def stored_grader_outcome(self) -> str | None:
        grading = self.stored.grading
        return grading.outcome if grading is not None else None

    def result(self) -> TrialResult:
        """The stored result with what the replay derived: the agent's usage, turns, tool
        calls and model calls, the totals and the cost. Verdicts are the stored ones."""
        t = self.transcript
        agent = self.stored.agent.model_copy(
            update={
                "turns": t.turns,
                "tool_calls": t.tool_calls,
                "calls": len(t.calls),
                "usage": t.usage,
                "model": t.model or self.stored.agent.model,
            }
        )
        again = self.stored.with_final_round(agent=agent)
        return again.revised(totals=Totals.over(again.rounds), cost=self.cost)


def replay(
    folder: Path,
    *,
    price_files: tuple[Path, ...] = (),
    sandbox: SandboxKind = "auto",
    regrade: bool = True,
) -> Replayed:
    """A stored cell derived again; ``regrade``: grade its final workspace again too."""
    result_file = folder / "result.json"
    if not result_file.is_file():
        raise UserError(f"no result.json in {folder}: not a recorded trial")
    stored = TrialResult.model_validate_json(result_file.read_text())
    transcript_file = folder / "transcript.json"
    if not transcript_file.is_file():
        raise UserError(f"no transcript.json in {folder}: the trial kept no record of its run")
    transcript = Transcript.model_validate_json(transcript_file.read_text())
    task = stored_task(folder)
    harness = get_harness(stored.variant.harness)
    source = "transcript"
    if isinstance(harness, AgentCli):
        from harnessdrive.harnesses.cli.stored_logs import recollect

        transcript = recollect(harness, folder, stored_run(stored), transcript, task)
        source = "session log"
    cost = _price_again(stored, transcript, harness, price_files)
    outcome = (
        _grade_again(folder, stored, task, sandbox)
        if regrade
        else (stored.grading.outcome if stored.grading is not None else "not_graded")
    )
    return Replayed(
        stored=stored,
        transcript=transcript,
        source=source,
        cost=cost,
        grader_outcome=outcome,
        task=task,
    )


def stored_run(result: TrialResult) -> StoredRun:
    """What a stored result says about its agent's run, for its adapter to read the logs."""
    from harnessdrive.harnesses.cli.stored_logs import StoredRun

    return StoredRun(
        variant=result.variant,
        workspace=result.workspace,
        version=result.harness_version,
        repetition=result.repetition,
        exit_code=result.agent.exit_code,
        timed_out=result.status == "timeout",
        seconds=result.seconds.agent,
    )


def _price_again(
    stored: TrialResult, transcript: Transcript, harness: Harness, price_files: tuple[Path, ...]
) -> Cost:
    """The same charging rules a live trial is priced by (accounting/charge.py)."""
    from harnessdrive.accounting.charge import RunEnd, RunFacts, charge_run
    from harnessdrive.accounting.plan_pricing import price_variants
    from harnessdrive.accounting.trial_cost import NO_MODEL, to_cost
    from harnessdrive.pytest_plugin.state import unprobed_info

    book = PriceBook.load(price_files)
    on = stored.cost.priced_on or date.fromisoformat(stored.started[:10])
    variant = stored.variant
    pricing = price_variants(
        [variant],
        {variant.harness: harness},
        book,
        on=on,
        infos={variant.harness: unprobed_info(harness)},
    ).for_variant(variant)
    if pricing is None or not pricing.uses_model:
        return NO_MODEL
    ended: RunEnd = "cut_off" if stored.status in ("timeout", "interrupted") else "finished"
    facts = RunFacts(
        calls=transcript.calls,
        reported_usd=transcript.reported_cost_usd,
        ended=ended,
        billing=transcript.billing or pricing.plan.billing,
    )
    return to_cost(charge_run(facts, pricing.policy, book, on=on), on, transcript.calls)


def stored_task(folder: Path) -> Task:
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


@contextmanager
def final_workspace(folder: Path, task: Task) -> Iterator[tuple[Snapshot, Path]]:
    """The stored cell's final workspace, rebuilt: its task's base state plus its diff."""
    with tempfile.TemporaryDirectory(prefix="harnessdrive-replay-") as scratch:
        snapshot = build_snapshot(task.repo_path, task.spec.repo.ref, Path(scratch) / "snap")
        workspace = Path(scratch) / "workspace"
        shutil.copytree(snapshot.root, workspace, symlinks=True)
        patch = folder / "diff.patch"
        if patch.is_file() and patch.stat().st_size:
            git("apply", "--whitespace=nowarn", "--binary", str(patch.resolve()), cwd=workspace)
        yield snapshot, workspace


def _grade_again(folder: Path, stored: TrialResult, task: Task, sandbox: SandboxKind) -> str:
    with final_workspace(folder, task) as (snapshot, workspace):
        changes = capture_changes(snapshot, workspace)
        settings = WorkerSettings(sandbox=sandbox, hidden=(folder,), python=sys.executable)
        executor = create_executor("local", settings)
        try:
            job = TrialJob(
                key=f"replay-{stored.trial_id}",
                task=task,
                variant=stored.variant,
                harness=KnownChange(changes=changes, base=snapshot),
                identity=stored.revised(status="interrupted", rounds=()),
            )
            done = executor.submit(job).result()
            shutil.rmtree(done.artifacts, ignore_errors=True)
        finally:
            executor.close()
    return done.result.outcome
