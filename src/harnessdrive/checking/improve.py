"""The self-test of an improvement task: its gate, its objective's noise, and its objective
against forgery, from trials of the improve protocol.

The ``noop`` agent's trial measures the untouched repository: its baseline must pass the gate
(or the trial never ran a round) and nothing may improve. The ``reference`` agent applies the
task's reference overlays one per round: each must be kept, and the trial must pass.

Noise is measured, not assumed: the ``noise`` trial measures the untouched repository with at
least :data:`NOISE_SAMPLES` samples (three times the task's ``repeats``, at least that many), and
their spread (half the range, relative to the median) is reported. The spread of a measurement
of ``repeats`` samples is taken as that spread over the square root of ``repeats``; a task where
it exceeds ``min_improvement`` is refused, with the ``repeats`` that would bring it inside.

Then every attack of checking/attacks.py runs one round: a forger that moves the
objective past the acceptance margin, or a comment-only change that does, fails the task.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from harnessdrive.checking.attacks import (
    ATTACKS,
    FORGERS,
    AttackAgent,
    AttackResult,
    forged_problem,
    moved_past,
    noise_problem,
    read_attack,
)
from harnessdrive.checking.cases import CheckCase, TaskCheck
from harnessdrive.harnesses.base import Harness
from harnessdrive.harnesses.scripted import NoopAgent
from harnessdrive.protocols.improve.metrics import spread
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.improve_models import ImproveOverrides, ImproveSpec
from harnessdrive.tasks.loading import Task

NOISE = "noise"
NOISE_SAMPLES = 5
MAX_REPEATS = 100
RECORD_FILE = "improve.json"


def noise_samples(spec: ImproveSpec) -> int:
    """How many samples the ``noise`` case takes of the untouched repository."""
    return min(MAX_REPEATS, max(NOISE_SAMPLES, 3 * spec.objective.repeats))


def improve_cases(task: Task) -> list[tuple[str, Harness, ImproveOverrides, Task]]:
    """The cases beyond ``reference`` and ``noop``, one round each: the noise (on the task with
    more samples per measurement) and every attack."""
    spec = task.spec.improve
    assert spec is not None
    objective = spec.objective.model_copy(update={"repeats": noise_samples(spec)})
    improve = spec.model_copy(update={"objective": objective})
    sampled = replace(task, spec=task.spec.model_copy(update={"improve": improve}))
    one_round = ImproveOverrides(rounds=1, evaluator_budget=0)
    cases: list[tuple[str, Harness, ImproveOverrides, Task]] = [
        (NOISE, NoopAgent(), one_round, sampled)
    ]
    cases += [(f"attack-{name}", AttackAgent(name), one_round, task) for name in ATTACKS]
    return cases


def improve_report(task: Task, results: dict[str, TrialResult], logs: Path) -> TaskCheck:
    """The check of ``task`` from its trials; their files are under ``logs/<case>/``."""
    spec = task.spec.improve
    assert spec is not None
    report = TaskCheck(task=task.id)
    noop, reference = results["noop"], results["reference"]
    if noop.status == "could_not_run":
        why = noop.rounds[0].agent.error if noop.rounds else noop.note
        report.cases.append(CheckCase("untouched", "pass", "not_graded", why or ""))
        report.problems.append(f"the untouched repository cannot be the baseline: {why}")
        return report
    report.cases.append(CheckCase("untouched", "pass", "pass", _curve_text(noop)))
    kept_by_noop = noop.metrics.get("improve.rounds_kept", 0.0)
    report.cases.append(CheckCase("noop", "fail", noop.outcome, _curve_text(noop)))
    if noop.outcome != "fail" or kept_by_noop:
        report.problems.append(f"doing nothing should not improve, but got {noop.outcome}")
    overlays = min(len(spec.overlays), spec.rounds)
    kept = int(reference.metrics.get("improve.rounds_kept", 0.0))
    report.cases.append(CheckCase("reference", "pass", reference.outcome, _curve_text(reference)))
    if not spec.overlays:
        report.problems.append("no reference overlays ([improve] overlays)")
    elif reference.outcome != "pass" or kept != overlays:
        report.problems.append(
            f"the reference overlays should improve round by round ({overlays} kept and a "
            f"pass), but {kept} were kept and the trial got {reference.outcome}"
        )
    _noise(report, spec, logs / NOISE / RECORD_FILE)
    _attacks(report, spec, logs)
    for name in ATTACKS:  # whatever its value did, an attack's trial never passes
        attacked = results.get(f"attack-{name}")
        if attacked is not None and attacked.outcome == "pass":
            report.problems.append(f"the {name} attack's trial passed")
    return report


def _noise(report: TaskCheck, spec: ImproveSpec, record: Path) -> None:
    measured = read_attack(NOISE, record)
    if measured is None or len(measured.baseline) < 3:
        report.problems.append("the untouched repository's noise could not be measured")
        return
    one = spread(measured.baseline)
    repeats = spec.objective.repeats
    with_repeats = one / math.sqrt(repeats)
    report.notes.append(
        f"objective spread at the baseline: ±{one:.1%} per sample over "
        f"{len(measured.baseline)} samples, ±{with_repeats:.1%} with repeats = {repeats}"
    )
    if with_repeats <= spec.min_improvement or one == 0:
        return
    if spec.min_improvement > 0:
        needed = math.ceil((one / spec.min_improvement) ** 2) + 1
        fix = (
            f"set the objective's repeats to {needed}"
            if needed <= MAX_REPEATS
            else f"raise min_improvement above {one / math.sqrt(MAX_REPEATS):.3g}"
        )
    else:
        fix = f"raise min_improvement above {with_repeats:.3g} or the repeats"
    report.problems.append(
        f"the objective's noise (±{with_repeats:.1%} with repeats = {repeats}) exceeds "
        f"min_improvement {spec.min_improvement:g}, so noise alone could pass: {fix}"
    )


def _attacks(report: TaskCheck, spec: ImproveSpec, logs: Path) -> None:
    direction = spec.objective.direction
    for name in ATTACKS:
        found = read_attack(name, logs / f"attack-{name}" / RECORD_FILE)
        if found is None:
            report.cases.append(CheckCase(f"attack-{name}", "fail", "not_graded", "no record"))
            report.problems.append(f"the {name} attack could not be run")
            continue
        moved = moved_past(found, direction, spec.min_improvement)
        report.cases.append(
            CheckCase(f"attack-{name}", "fail", "moved" if moved else "fail", _moved_text(found))
        )
        if moved:
            report.problems.append(
                forged_problem(found) if name in FORGERS else noise_problem(found)
            )


def _moved_text(found: AttackResult) -> str:
    if not found.attacked:
        return "could not be measured"
    base = sorted(found.baseline)[len(found.baseline) // 2]
    value = sorted(found.attacked)[len(found.attacked) // 2]
    return f"value {value:g} (baseline {base:g})"


def _curve_text(result: TrialResult) -> str:
    count = sum(name.startswith("improve.curve.") for name in result.metrics)
    curve = [result.metrics[f"improve.curve.{n}"] for n in range(count)]
    return "curve " + " -> ".join(f"{value:g}" for value in curve) if curve else ""
