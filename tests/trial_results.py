"""A TrialResult with every field a test does not care about filled in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harnessdrive.store.results import TrialResult
from harnessdrive.tasks import load_suite
from harnessdrive.tasks.identity import suite_id
from harnessdrive.tasks.models import VariantSpec


def trial_result(task: str, variant: str, **fields: Any) -> TrialResult:
    """A recorded trial of ``variant`` on ``task`` in suite ``s``; ``fields`` override."""
    values: dict[str, Any] = {
        "trial_id": f"s/{task}/{variant}/r1",
        "suite": "s",
        "task": task,
        "task_fingerprint": "f",
        "variant": VariantSpec(harness=variant),
        "variant_label": variant,
        "harness": variant,
        "repetition": 1,
        "started": "2026-01-01T00:00:00Z",
        "finished": "2026-01-01T00:01:00Z",
        **fields,
    }
    return TrialResult(**values)


def trial_folder(results: Path, trial: str) -> Path:
    """The folder of ``<suite name>/<task>/<variant>/r<N>`` in a results folder that holds one
    suite of that name (trial ids start with the suite's identity, ``<name>@<hash>``)."""
    name, _, rest = trial.partition("/")
    found = [p for p in (results / "trials").glob(f"{name}@*/{rest}") if p.is_dir()]
    assert len(found) == 1, f"{trial}: {found}"
    return found[0]


def trial_id_of(results: Path, trial: str) -> str:
    return trial_folder(results, trial).relative_to(results / "trials").as_posix()


def planned_folder(results: Path, suite: Path, rest: str) -> Path:
    """Where a run of the suite folder ``suite`` will record ``<task>/<variant>/r<N>``."""
    loaded = load_suite(suite)
    return results / "trials" / suite_id(loaded.name, loaded.folder) / rest
