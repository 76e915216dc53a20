"""A TrialResult with every field a test does not care about filled in."""

from __future__ import annotations

from typing import Any

from harnessdrive.store.results import TrialResult
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
