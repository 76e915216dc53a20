"""A run's plan: tasks x variants x repetitions, in task-major order.

Every variant runs a task before the next task starts, so a run stopped early (at the spend cap,
say) still compares the harnesses on the same tasks.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from harnessdrive.errors import UserError
from harnessdrive.harnesses.base import Harness
from harnessdrive.harnesses.registry import get_harness
from harnessdrive.store.paths import trial_id
from harnessdrive.tasks.loading import Suite, Task
from harnessdrive.tasks.models import VariantSpec


@dataclass(frozen=True)
class PlannedTrial:
    trial_id: str
    suite: str
    task: Task
    variant: VariantSpec
    repetition: int


@dataclass(frozen=True)
class Plan:
    run_id: str
    suite: Suite
    variants: tuple[VariantSpec, ...]
    harnesses: dict[str, Harness]
    repeat: int
    trials: tuple[PlannedTrial, ...]


def make_plan(suite: Suite, variants: tuple[VariantSpec, ...], repeat: int) -> Plan:
    """Check every variant before anything runs, then list the trials."""
    if repeat < 1:
        raise UserError(f"--repeat must be at least 1, not {repeat}")
    if not variants:
        raise UserError(
            f"no harness chosen: pass --harness, or list default variants in {suite.folder}"
            "/suite.toml"
        )
    labels = [v.label for v in variants]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise UserError(f"variant named twice: {', '.join(duplicates)}; give each a 'name'")
    harnesses: dict[str, Harness] = {}
    for variant in variants:
        if variant.harness not in harnesses:
            harnesses[variant.harness] = get_harness(variant.harness)
        harnesses[variant.harness].check_variant(variant)
    trials = tuple(
        PlannedTrial(
            trial_id=trial_id(suite.name, task.id, variant.label, rep),
            suite=suite.name,
            task=task,
            variant=variant,
            repetition=rep,
        )
        for task in suite.tasks
        for rep in range(1, repeat + 1)
        for variant in variants
    )
    return Plan(
        run_id=run_id_for(suite, variants, repeat),
        suite=suite,
        variants=variants,
        harnesses=harnesses,
        repeat=repeat,
        trials=trials,
    )


def run_id_for(suite: Suite, variants: tuple[VariantSpec, ...], repeat: int) -> str:
    """The same command on the same suite gets the same run id, so it resumes."""
    identity = {
        "suite": suite.name,
        "folder": str(suite.folder),
        "variants": [v.model_dump(mode="json") for v in variants],
        "repeat": repeat,
    }
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]
    return f"{suite.name}-{digest}"
