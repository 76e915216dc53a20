"""A run's plan: tasks x variants x repetitions, in task-major order.

Every variant runs a task before the next task starts, so a run stopped early (at the spend cap,
say) still compares the harnesses on the same tasks.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from harnessdrive.errors import Setting, TaskFormatError, UserError
from harnessdrive.harnesses.base import Harness
from harnessdrive.harnesses.registry import check_options, get_harness
from harnessdrive.matrix.resolve import resolve_matrix
from harnessdrive.protocols.improve.sessions import check_sessions
from harnessdrive.protocols.registry import protocols
from harnessdrive.store.paths import trial_id
from harnessdrive.tasks.identity import harnessdrive_version, suite_identity, suite_version
from harnessdrive.tasks.loading import Suite, Task
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.workspace.snapshot import unreadable_sources


@dataclass(frozen=True)
class PlannedTrial:
    trial_id: str
    suite: str
    task: Task
    variant: VariantSpec
    repetition: int
    suite_id: str = ""
    """The suite's identity (:mod:`harnessdrive.tasks.identity`): the first part of the trial id."""
    suite_version: str = ""
    suite_folder: str = ""
    protocol: str = "single"
    """The trial protocol: the variant's, else the task's (protocols/registry.py)."""


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
        raise UserError(
            f"the repeat count must be at least 1, not {repeat}", settings=(Setting("repeat"),)
        )
    if not variants:
        raise UserError(
            f"no harness chosen: name one, or list default variants in {suite.folder}/suite.toml",
            settings=(Setting("harnesses", "NAME"),),
        )
    variants = resolve_matrix(variants, suite.folder)
    labels = [v.label for v in variants]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise UserError(f"variant named twice: {', '.join(duplicates)}; give each a 'name'")
    harnesses: dict[str, Harness] = {}
    for variant in variants:
        if variant.harness not in harnesses:
            harnesses[variant.harness] = get_harness(variant.harness)
        _check_takes_model(variant, harnesses[variant.harness])
        check_options(variant)
        harnesses[variant.harness].check_variant(variant)
    _check_sources(suite)
    _check_protocols(suite, variants)
    check_sessions(suite, variants, harnesses)
    identity, version = suite_identity(suite), suite_version(suite)
    trials = tuple(
        PlannedTrial(
            trial_id=trial_id(identity, task.id, variant.label, rep),
            suite=suite.name,
            task=task,
            variant=variant,
            repetition=rep,
            suite_id=identity,
            suite_version=version,
            suite_folder=str(suite.folder),
            protocol=variant.protocol or task.spec.protocol,
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


def _check_sources(suite: Suite) -> None:
    """A task whose repository or ref cannot be read is bad input, not an error per trial."""
    problems = unreadable_sources((t.repo_path, t.spec.repo.ref) for t in suite.tasks)
    for task in suite.tasks:
        problem = problems.get((task.repo_path, task.spec.repo.ref))
        if problem:
            raise TaskFormatError(f"{task.folder / 'task.toml'}: {problem}")


def _check_protocols(suite: Suite, variants: tuple[VariantSpec, ...]) -> None:
    """Every protocol a task or a variant names is registered."""
    known = protocols()
    for task in suite.tasks:
        if task.spec.protocol not in known:
            raise TaskFormatError(
                f"{task.folder / 'task.toml'}: protocol {task.spec.protocol!r} is not registered "
                f"(registered: {', '.join(sorted(known))})"
            )
    for variant in variants:
        if variant.protocol is not None and variant.protocol not in known:
            raise UserError(
                f"variant {variant.label!r}: protocol {variant.protocol!r} is not registered "
                f"(registered: {', '.join(sorted(known))})"
            )


def _check_takes_model(variant: VariantSpec, harness: Harness) -> None:
    """A model or effort given to a harness that runs no model would only rename the arm."""
    setting = ("model", variant.model) if variant.model else ("effort", variant.effort)
    if setting[1] and not harness.info().uses_model:
        raise UserError(
            f"harness {variant.harness!r} runs no model, so it takes no {setting[0]} "
            f"(variant {variant.label!r} sets {setting[0]} {setting[1]!r})"
        )


def planned_identity(trial: PlannedTrial) -> dict[str, str]:
    """The result fields that say which suite, which version of it and which harnessdrive."""
    return {
        "suite_id": trial.suite_id,
        "suite_folder": trial.suite_folder,
        "suite_version": trial.suite_version,
        "harnessdrive_version": harnessdrive_version(),
    }


def run_identity(suite: Suite) -> dict[str, str]:
    """What a run manifest says about the suite it ran, besides its name and folder."""
    return {
        "suite_id": suite_identity(suite),
        "suite_version": suite_version(suite),
        "harnessdrive_version": harnessdrive_version(),
    }


def run_id_for(suite: Suite, variants: tuple[VariantSpec, ...], repeat: int) -> str:
    """The same command on the same suite gets the same run id, so it resumes."""
    identity = {
        "suite": suite_identity(suite),
        "folder": str(suite.folder),
        "variants": [_variant_identity(v) for v in variants],
        "repeat": repeat,
    }
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]
    return f"{suite.name}-{digest}"


def _variant_identity(variant: VariantSpec) -> dict[str, object]:
    # A variant that chooses no protocol or treatment keeps the run id it had before variants
    # could.
    unset = {field for field in ("protocol", "treatment") if getattr(variant, field) is None}
    return variant.model_dump(mode="json", exclude=unset or None)
