"""The ``improve`` grader kind: the task's tests are the gate, and the objective is measured.

The gate is the ``tests`` kind's deciding run (with the hidden files); the objective is measured
in a copy of its own without them (grading/objective.py). The verdict's outcome is the gate's;
its metrics hold the objective's samples and their median, which the improvement protocol reads.
"""

from __future__ import annotations

import statistics
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from harnessdrive.errors import GradingError
from harnessdrive.grading.kinds.base import GradingCopy
from harnessdrive.grading.kinds.tests import TestsGradeSpec, TestsKind
from harnessdrive.grading.objective import OBJECTIVE_LABEL, Measurement, measure
from harnessdrive.grading.verdict import Finding, Verdict
from harnessdrive.tasks.improve_models import ObjectiveSpec

KIND = "improve"
VALUE = "objective.value"
SAMPLE = "objective.sample."
RESULT = "objective.result"
"""The objective runner's digest of the workload's result, where it reports one."""


class ImproveGradeSpec(TestsGradeSpec):
    """``[grade]`` of kind ``improve``: the test command is the gate of an improvement task."""

    kind: Literal["improve"] = "improve"  # type: ignore[assignment]
    """``improve``: the gate is the test command with the hidden files; ``[improve]`` names the
    objective."""


class ImproveKind:
    """Pass when the gate passes; the objective's samples go into the verdict's metrics."""

    name = KIND
    spec_model = ImproveGradeSpec

    def grade(self, copy: GradingCopy, spec: ImproveGradeSpec) -> Verdict:
        improve = copy.task.spec.improve
        if improve is None:
            raise GradingError("a grader of kind 'improve' needs the task's [improve] table")
        # The measuring copy is separate from the deciding one, so both run at once.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="grade-objective") as pool:
            measuring = pool.submit(_measured, copy, improve.objective)
            try:
                gate = TestsKind().grade(copy, spec)
            finally:
                measured = measuring.result()
        return with_measurement(gate, measured)

    def samples(self, verdict: Verdict) -> tuple[float, ...]:
        return samples_of(verdict)

    def workload_result(self, verdict: Verdict) -> float | None:
        return verdict.metrics.get(RESULT)

    def without_measurement(self, verdict: Verdict, why: str) -> Verdict:
        return without_measurement(verdict, why)


def _measured(copy: GradingCopy, objective: ObjectiveSpec) -> Measurement:
    with copy.fresh(OBJECTIVE_LABEL) as own:
        if own is None:
            return Measurement(error="setup failed in the measuring copy")
        return measure(own, objective, copy.task.folder)


def with_measurement(verdict: Verdict, measured: Measurement) -> Verdict:
    """``verdict`` with the measurement's samples and median, or a finding saying why none."""
    if not measured.ok:
        finding = Finding(
            code="objective-failed", detail=measured.error or "no sample", severity="report"
        )
        return verdict.model_copy(update={"findings": (*verdict.findings, finding)})
    metrics = dict(verdict.metrics)
    metrics[VALUE] = statistics.median(measured.samples)
    for index, sample in enumerate(measured.samples, start=1):
        metrics[f"{SAMPLE}{index}"] = sample
    if measured.result is not None:
        metrics[RESULT] = measured.result
    return verdict.model_copy(update={"metrics": metrics})


def without_measurement(verdict: Verdict, why: str) -> Verdict:
    """``verdict`` with its objective's numbers taken out, and a finding saying why."""
    metrics = {
        name: value
        for name, value in verdict.metrics.items()
        if not (name.startswith(SAMPLE) or name in (VALUE, RESULT))
    }
    finding = Finding(code="objective-failed", detail=why, severity="report")
    return verdict.model_copy(update={"metrics": metrics, "findings": (*verdict.findings, finding)})


def samples_of(verdict: Verdict) -> tuple[float, ...]:
    """The objective's samples a verdict of this kind holds, in order (none when unmeasured)."""
    found = []
    index = 1
    while f"{SAMPLE}{index}" in verdict.metrics:
        found.append(verdict.metrics[f"{SAMPLE}{index}"])
        index += 1
    return tuple(found)
