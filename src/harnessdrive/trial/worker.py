"""Per-host state every trial on one worker shares: built by the executor, never by the driver.

A worker context owns a scratch root (with an owner record, so a later run sweeps it when this
process dies), the sandbox whose hidden paths include that root, the snapshot cache, the setup
states, the background reaper and the stop token its trials watch.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import Sandbox, get_sandbox
from harnessdrive.sandbox.scratch import keep_scratch_root, make_scratch_root
from harnessdrive.trial.job import WorkerSettings
from harnessdrive.trial.paths import TrialScratch, WorkerPaths
from harnessdrive.trial.reaper import Reaper
from harnessdrive.trial.snapshots import SnapshotCache
from harnessdrive.workspace.setup_reuse import SetupStates


class WorkerContext:
    """One host's sandbox, scratch root, snapshot cache, setup states, reaper and stop token."""

    def __init__(self, settings: WorkerSettings) -> None:
        self.settings = settings
        self.paths = WorkerPaths(
            make_scratch_root(settings.scratch_prefix, footprint=settings.footprint)
        )
        try:
            self.sandbox: Sandbox = get_sandbox(
                settings.sandbox,
                hidden=(*settings.hidden, self.paths.root),
                private=settings.private,
                shown=settings.shown,
            )
        except BaseException:
            shutil.rmtree(self.paths.root, ignore_errors=True)
            raise
        self.snapshots = SnapshotCache(self.paths.snapshots)
        self.setup_states = SetupStates(self.paths.setup_states)
        self.reaper = None if settings.keep else Reaper(self.paths.trash)
        self.stop = StopToken()
        self.kept: Path | None = None

    @property
    def python(self) -> str:
        return self.settings.python

    @property
    def keep(self) -> bool:
        return self.settings.keep

    def for_job(self, stop: StopToken) -> WorkerContext:
        """This context as one job sees it: everything shared, but the stop token its own
        (:meth:`StopToken.child`), so that job alone can be ended."""
        view = copy.copy(self)
        view.stop = stop
        return view

    def new_trial(self) -> TrialScratch:
        return self.paths.new_trial()

    def new_artifacts(self) -> Path:
        return self.paths.new_artifacts()

    def discard(self, scratch: TrialScratch) -> None:
        """A trial is over: its scratch folder goes (in the background), unless kept."""
        if self.keep:
            return
        if self.reaper is not None:
            self.reaper.discard(scratch.root)
        else:
            shutil.rmtree(scratch.root, ignore_errors=True)

    def close(self) -> None:
        """Remove the scratch root, or mark it kept (``keep``): no later sweep removes it."""
        if self.reaper is not None:
            self.reaper.close()
        if self.keep:
            keep_scratch_root(self.paths.root)
            self.kept = self.paths.root
        else:
            shutil.rmtree(self.paths.root, ignore_errors=True)
