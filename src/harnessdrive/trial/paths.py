"""Where everything lives in a worker's scratch root. The only place that knows the layout.

<scratch root>/                 harnessdrive-XXXX in the system temp dir (sandbox/scratch.py)
  snapshots/<source key>/       base snapshots, shared by the worker's trials
  setup-states/                 setup results shared by the worker's trials
  trash/                        scratch folders being deleted in the background
  artifacts/<job>/              a finished job's files, until the driver takes them
  trial-<id>/                   one trial's scratch (TrialScratch)

A trial's scratch folder holds our marker file, the agent's workspace, its private HOME and
TMPDIR, the prompt as a file, the grading copies and later rounds' workspaces.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.store.inflight import SCRATCH_MARKER


@dataclass(frozen=True)
class TrialScratch:
    root: Path

    @property
    def marker(self) -> Path:
        return self.root / SCRATCH_MARKER

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def prompt(self) -> Path:
        """The prompt as a file outside the workspace."""
        return self.root / "prompt.md"

    @property
    def grading(self) -> Path:
        return self.root / "grading"

    def round(self, number: int) -> TrialScratch:
        """Round ``number``'s own folders; round 1 uses the trial's."""
        return self if number == 1 else TrialScratch(self.root / "rounds" / str(number))


@dataclass(frozen=True)
class WorkerPaths:
    root: Path

    @property
    def snapshots(self) -> Path:
        return self.root / "snapshots"

    @property
    def setup_states(self) -> Path:
        return self.root / "setup-states"

    @property
    def trash(self) -> Path:
        return self.root / "trash"

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    def new_artifacts(self) -> Path:
        """A new, empty folder for one job's files."""
        folder = self.artifacts / uuid.uuid4().hex[:12]
        folder.mkdir(parents=True)
        return folder

    def new_trial(self) -> TrialScratch:
        """A new trial scratch folder, marked as ours."""
        scratch = TrialScratch(self.root / f"trial-{uuid.uuid4().hex[:12]}")
        scratch.root.mkdir(parents=True)
        scratch.marker.touch()
        return scratch
