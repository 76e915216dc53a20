"""The start of a treated trial: the task's snapshot with the harness's treatment files."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.harnesses.registry import harness_entry
from harnessdrive.matrix.resolve import known_instruction_files
from harnessdrive.matrix.treatment import load_treatment
from harnessdrive.tasks.loading import Task
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.trial.snapshots import SnapshotCache
from harnessdrive.workspace.snapshot import Snapshot


def trial_snapshot(snapshots: SnapshotCache, task: Task, variant: VariantSpec) -> Snapshot:
    """The base snapshot for an untreated variant; for a treated one, the base with the files
    the treatment gives this variant's harness laid over it (matrix/treatment.py)."""
    spec = variant.treatment
    if spec is None:
        return snapshots.get(task)
    # The plan made the folder absolute; the suite folder is not needed to find it again.
    treatment = load_treatment(spec, Path(spec.folder or "."))
    entry = harness_entry(variant.harness)
    files = treatment.files_for(entry.instruction_files, known_instruction_files((entry,)))
    key = f"{treatment.name}-{treatment.digest(files)}"
    return snapshots.overlaid(task, key, [(rel, treatment.folder / rel) for rel in files])
