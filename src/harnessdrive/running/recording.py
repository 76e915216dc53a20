"""The driver's side of a trial: claim its folder before it runs, record what comes back.

Only the driver writes the results store. Before a job is submitted, its trial gets a fresh
attempt folder and an in-flight record holding the result to record if the driver is killed;
when the job comes back, its files are moved into the trial folder, then its ``result.json``
is written (last) and the in-flight record removed.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from harnessdrive.accounting.trial_cost import NO_MODEL, Costing
from harnessdrive.harnesses.base import Harness
from harnessdrive.running.plan import PlannedTrial, planned_identity
from harnessdrive.store.checkpoint import (
    CHECKPOINT_FILE,
    CHECKPOINTED_FOLDER,
    RoundCheckpoint,
    keep_files,
    read_checkpoint,
    write_checkpoint,
)
from harnessdrive.store.flush import BackgroundFlush
from harnessdrive.store.inflight import InflightRecord
from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import TrialResult
from harnessdrive.store.review import REVIEW_FILE
from harnessdrive.store.store import Store, utc_now
from harnessdrive.trial.failures import abandoned, machinery_failure
from harnessdrive.trial.job import JobResult
from harnessdrive.trial.reaper import Reaper


@dataclass(frozen=True)
class ClaimedTrial:
    """A trial whose attempt folder and in-flight record exist; nothing has run yet."""

    planned: PlannedTrial
    paths: TrialPaths
    attempt: int
    inflight: Path
    identity: TrialResult
    """The result as it would be recorded if the trial were interrupted now."""
    budget_usd: float | None = None
    """Spend left under the cap when the trial starts."""
    resume: RoundCheckpoint | None = None
    """The round checkpoint a killed earlier attempt left (store/checkpoint.py)."""

    @property
    def key(self) -> str:
        return f"{self.planned.trial_id}#{self.attempt}"


class Recorder:
    def __init__(self, store: Store, run_id: str, sandbox: str, costing: Costing) -> None:
        self.store = store
        self.run_id = run_id
        self.sandbox = sandbox
        self.costing = costing
        # Removing even an empty folder can take longer than recording a trial on some file
        # systems (trial/reaper.py): what a job hands back goes in the background.
        self._reaper = Reaper(None)
        # Waiting for the disk is the longest step of recording on a busy one: results are
        # written atomically here and flushed to disk in the background.
        self._flush = BackgroundFlush()

    def close(self) -> None:
        """Wait until every handed-back folder is gone and every result is on disk."""
        self._reaper.close()
        self._flush.close()

    def claim(
        self, planned: PlannedTrial, harness: Harness, *, budget_usd: float | None = None
    ) -> ClaimedTrial:
        """A fresh attempt folder and the in-flight record of ``planned``."""
        resume = self._checkpoint_left(planned)
        paths, attempt = self.store.begin_attempt(planned.trial_id)
        if resume is not None:  # the killed attempt, and its rounds' files, are now previous
            kept = paths.previous / str(attempt - 1) / CHECKPOINTED_FOLDER
            resume = replace(resume, files=kept)
        started = utc_now()
        identity = TrialResult(
            trial_id=planned.trial_id,
            run_id=self.run_id,
            attempt=attempt,
            suite=planned.suite,
            task=planned.task.id,
            task_title=planned.task.spec.title,
            task_fingerprint=planned.task.fingerprint,
            variant=planned.variant,
            variant_label=planned.variant.label,
            harness=planned.variant.harness,
            repetition=planned.repetition,
            status="interrupted",
            outcome="not_graded",
            started=started,
            finished=started,
            sandbox=self.sandbox,
            note="the driver stopped before this trial finished",
            cost=self.costing.if_interrupted(planned.variant, harness),
            **planned_identity(planned),
        )
        record = InflightRecord(
            trial_id=planned.trial_id,
            attempt=attempt,
            started=started,
            # The worker makes the trial's scratch folder; a killed driver's whole scratch
            # root is swept by the next run (sandbox/scratch.py).
            scratch="",
            pid=os.getpid(),
            interrupted=identity,
        )
        inflight = self.store.mark_inflight(record)
        return ClaimedTrial(
            planned, paths, attempt, inflight, identity, budget_usd=budget_usd, resume=resume
        )

    def _checkpoint_left(self, planned: PlannedTrial) -> RoundCheckpoint | None:
        """The checkpoint of this trial's last attempt, if that attempt never finished."""
        folder = self.store.paths.trial(planned.trial_id)
        left = read_checkpoint(folder.root / CHECKPOINT_FILE)
        if left is None or left.task_fingerprint != planned.task.fingerprint:
            return None
        try:
            old = TrialResult.model_validate_json(folder.result.read_bytes())
        except (OSError, ValueError):
            return left  # no result: the attempt was killed before it was recorded
        # Killed, or stopped by a failure of the machinery: the rounds recorded stand.
        return left if old.status in ("interrupted", "could_not_run") else None

    @staticmethod
    def on_round(claimed: ClaimedTrial) -> Callable[[RoundCheckpoint], None]:
        """What writes ``claimed``'s round checkpoints into its attempt folder, with the files
        of the rounds recorded so far."""

        def record(checkpoint: RoundCheckpoint) -> None:
            keep_files(claimed.paths.root / CHECKPOINTED_FOLDER, checkpoint)
            write_checkpoint(claimed.paths.root / CHECKPOINT_FILE, checkpoint)

        return record

    def skipped(self, claimed: ClaimedTrial, reason: str) -> TrialResult:
        """Record ``claimed`` as skipped for ``reason``, without running it."""
        result = claimed.identity.revised(
            status="skipped", note=reason, finished=utc_now(), cost=NO_MODEL
        )
        self._record(claimed, result)
        return result

    def finished(self, claimed: ClaimedTrial, done: JobResult) -> TrialResult:
        """Move the job's files into the trial folder, then record its result."""
        if done.result.status not in ("interrupted", "could_not_run"):
            # A finished attempt holds every round's files itself.
            shutil.rmtree(claimed.paths.root / CHECKPOINTED_FOLDER, ignore_errors=True)
        adopt_artifacts(done.artifacts, claimed.paths.root)
        self._reaper.discard(done.artifacts)
        self._record(claimed, done.result)
        return done.result

    def failed(self, claimed: ClaimedTrial, exc: BaseException) -> TrialResult:
        """Record ``claimed`` as its machinery's failure: its executor raised ``exc``."""
        result = machinery_failure(claimed.identity, exc)
        self._record(claimed, result)
        return result

    def abandoned(self, claimed: ClaimedTrial) -> TrialResult:
        """Record ``claimed`` as interrupted: the run stopped and it never came back."""
        result = abandoned(claimed.identity)
        self._record(claimed, result)
        return result

    def _record(self, claimed: ClaimedTrial, result: TrialResult) -> None:
        self._flush.add(self.store.record(result, durable=False))
        self.store.clear_inflight(claimed.inflight)


RESERVED = frozenset({"result.json", "previous", REVIEW_FILE})
"""Names in a trial folder that only the store writes."""


def adopt_artifacts(artifacts: Path, folder: Path) -> None:
    """Move every file and folder of ``artifacts`` into ``folder``.

    The files were written by a worker next to an agent's work, so they are taken as hostile:
    a link or an entry that would replace something already there (``result.json``, an
    earlier attempt) is left behind, for the caller to remove with ``artifacts``.
    """
    try:
        with os.scandir(artifacts) as listing:
            entries = list(listing)
    except FileNotFoundError:
        return
    present = set(os.listdir(folder))
    for entry in entries:
        # DirEntry answers from the listing itself: no stat per file, and never through a link.
        if entry.name in RESERVED or entry.name in present or entry.is_symlink():
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        if not (is_dir or entry.is_file(follow_symlinks=False)):
            continue
        target = os.path.join(folder, entry.name)
        try:
            os.rename(entry.path, target)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            if is_dir:
                shutil.copytree(entry.path, target, symlinks=True)
            else:
                shutil.copyfile(entry.path, target)
