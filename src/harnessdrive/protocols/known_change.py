"""A trial whose change is known before it starts: no agent runs, the change is graded as given.

The grader's self-test grades the untouched repository this way, and mining grades each
commit's parent with and without its gold patch. With no agent there is no workspace to copy
and no setup to run in one: the only copy is the grading copy the grader always makes. The
trial core (trial/core.py) hands every job whose harness is a :class:`KnownChange` to
:func:`run_known_change`, on whichever executor the job was submitted to.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import HarnessError
from harnessdrive.grading.grader import GradingSetup
from harnessdrive.grading.verdict import Verdict
from harnessdrive.harnesses.base import AgentRequest, AgentRun, HarnessInfo
from harnessdrive.protocols.round import graded
from harnessdrive.protocols.stages import stage
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.runner import Sandbox
from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import DiffStats, RoundRecord, Timing, Totals, TrialResult
from harnessdrive.store.store import utc_now
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.trial.job import JobResult, TrialJob
from harnessdrive.trial.paths import TrialScratch
from harnessdrive.trial.worker import WorkerContext
from harnessdrive.workspace.changes import Changes
from harnessdrive.workspace.snapshot import Snapshot

KNOWN_CHANGE = "known-change"


@dataclass(frozen=True)
class KnownChange:
    """A stand-in harness whose change is given; it is graded, never run."""

    changes: Changes | None = None
    """The change against the base state; None is no change at all."""
    base: Snapshot | None = None
    """The base state the change was taken against, when the submitter has built it already on
    this host (mining builds one per commit and removes it after the commit's checks); None
    takes the worker's own snapshot of the task."""

    @property
    def name(self) -> str:
        return KNOWN_CHANGE

    def info(self) -> HarnessInfo:
        return HarnessInfo(
            name=KNOWN_CHANGE, installed=True, version="builtin", detail=self.__doc__ or ""
        )

    def check_variant(self, variant: VariantSpec) -> None:
        return None

    def run(self, request: AgentRequest) -> AgentRun:
        raise HarnessError("a known change is graded as given, never run")


def run_known_change(
    job: TrialJob,
    worker: WorkerContext,
    scratch: TrialScratch,
    paths: TrialPaths,
    began: float,
    *,
    sandbox: Sandbox,
) -> TrialResult:
    """Grade the job's known change in ``sandbox``, in a grading copy under ``scratch``; its logs
    go to ``paths``.

    The trial core passes the worker's sandbox without the task's per-trial limits, as the
    self-test and mining have always graded: the limits' watchdog measures the disk use of the
    copy over and over, which is costly while a setup command installs into every copy.
    """
    assert isinstance(job.harness, KnownChange)
    known, task = job.harness, job.task
    with stage("snapshot build"):
        snapshot = known.base or worker.snapshots.get(task)
    changes = known.changes
    if changes is None:
        changes = Changes(base_tree=snapshot.tree, tree=snapshot.tree, files=(), patch=b"")
    scratch.grading.mkdir(parents=True, exist_ok=True)
    setup = GradingSetup(
        task=task,
        snapshot=snapshot,
        scratch=scratch.grading,
        logs=paths.root,
        sandbox=sandbox,
        python=worker.python,
        stop=worker.stop,
        keep_copy=True,  # the trial's scratch folder goes as a whole
        run_visible=job.settings.run_visible,
    )
    verdict = graded(setup, changes)  # the one mapping of grader errors to verdicts
    if worker.stop.stopped:
        return job.identity.revised(finished=utc_now())
    timing = Timing(grading=verdict.seconds, total=round(now() - began, 3))
    return job.identity.revised(
        status="completed",
        outcome=verdict.outcome,
        finished=utc_now(),
        seconds=timing,
        rounds=(
            RoundRecord(
                status="completed",
                outcome=verdict.outcome,
                diff=DiffStats(
                    files_changed=len(changes.files),
                    lines_added=changes.lines_added,
                    lines_deleted=changes.lines_deleted,
                    paths=changes.paths,
                    patch_bytes=changes.patch_bytes,
                ),
                grading=verdict,
                seconds=timing,
            ),
        ),
        totals=Totals(rounds=1),
        sandbox=worker.sandbox.name,
        base_commit=snapshot.commit,
        base_source=snapshot.source,
        note=None,
    )


def received(done: JobResult, folder: Path) -> TrialResult:
    """A job's result once its files are in ``folder``, where its messages name them."""
    folder.mkdir(parents=True, exist_ok=True)
    for item in sorted(done.artifacts.iterdir()):
        shutil.move(item, folder / item.name)
    shutil.rmtree(done.artifacts, ignore_errors=True)
    return done.result


def setup_failed(verdict: Verdict) -> bool:
    """Whether the task's setup failed in the grading copy, before any test ran."""
    run = verdict.setup
    return run is not None and (run.exit_code != 0 or run.timed_out)
