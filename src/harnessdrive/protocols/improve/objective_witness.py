"""The objective's witness: a state known to be worse, measured beside a claimed improvement.

When a trial's final state beats the baseline, the grader measures a known-bad state right
after it, in the same final grading: the untouched base state (the agent's change removed), or
the task's ``known_bad`` folder laid over the base state. It must come out worse than the final
state by the task's acceptance rule (``min_improvement``, beyond the noise). When it does not,
the number does not depend on the code (a forged or constant channel, or an effect on the
machine that both states share), and the trial is tampered. Only a claimed improvement pays for
it, once per trial, never at an evaluator call.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Any

from harnessdrive.errors import HarnessdriveError
from harnessdrive.grading.verdict import Finding
from harnessdrive.protocols.base import ProtocolInputs
from harnessdrive.protocols.improve.acceptance import improvement
from harnessdrive.tasks.improve_models import ImproveSpec
from harnessdrive.tasks.overlays import lay_over
from harnessdrive.workspace.changes import Changes, capture_changes

CODE = "objective-witness"
WITNESS_CALL = 1
"""The witness's logs go to ``rounds/<N>/evaluations/1/`` of the round number it is given."""


@dataclass(frozen=True)
class WitnessReading:
    """The known-bad state's measurement beside the final state's samples."""

    state: str
    """Which state was measured: the untouched base state or the task's known-bad folder."""
    final: tuple[float, ...]
    min_improvement: float
    samples: tuple[float, ...] = ()
    worse: bool = False
    """Whether it came out worse than the final state by the acceptance rule."""
    error: str | None = None
    machinery: bool = False

    @property
    def value(self) -> float | None:
        return median(self.samples) if self.samples else None

    def finding(self) -> Finding | None:
        """None when the witness came out worse; else what went wrong, tampering unless the
        machinery could not measure it."""
        if self.error is not None:
            detail = f"{self.state} could not be measured beside the final state: {self.error}"
            return Finding(
                code=CODE, detail=detail, severity="report" if self.machinery else "tamper"
            )
        if self.worse:
            return None
        detail = (
            f"{self.state} measured {self.value:g} beside the final state's "
            f"{median(self.final):g}: it must come out worse by more than "
            f"{self.min_improvement:.1%} beyond the noise, so the value does not depend on the code"
        )
        return Finding(code=CODE, detail=detail)

    def as_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "value": self.value,
            "samples": list(self.samples),
            "worse": self.worse,
            "error": self.error,
        }


def read_witness(
    inputs: ProtocolInputs, spec: ImproveSpec, final: tuple[float, ...], number: int
) -> WitnessReading:
    """Measure the known-bad state (in round ``number``'s folder) beside ``final``."""
    state = (
        "the untouched base state"
        if spec.known_bad is None
        else f"the known-bad state ({spec.known_bad})"
    )
    reading = WitnessReading(state=state, final=final, min_improvement=spec.min_improvement)
    if inputs.measure is None:
        return _failed(reading, "this trial cannot measure", machinery=True)
    try:
        changes = _known_bad(inputs, spec, number)
    except HarnessdriveError as exc:
        return _failed(reading, f"it could not be built: {exc}", machinery=True)
    measured = inputs.measure(changes, number, WITNESS_CALL)
    if not measured.ok:
        return _failed(reading, measured.error or "no value", machinery=measured.machinery)
    found = improvement(spec.objective.direction, measured.samples, final)
    return WitnessReading(
        state=state,
        final=final,
        min_improvement=spec.min_improvement,
        samples=measured.samples,
        worse=found.beyond(spec.min_improvement),
    )


def _failed(reading: WitnessReading, error: str, *, machinery: bool) -> WitnessReading:
    return WitnessReading(
        state=reading.state,
        final=reading.final,
        min_improvement=reading.min_improvement,
        error=error,
        machinery=machinery,
    )


def _known_bad(inputs: ProtocolInputs, spec: ImproveSpec, number: int) -> Changes:
    snapshot = inputs.snapshot
    if spec.known_bad is None:
        return Changes(base_tree=snapshot.tree, tree=snapshot.tree, files=(), patch=b"")
    workspace = inputs.new_workspace(number)
    lay_over(inputs.task.folder / spec.known_bad, workspace)
    max_file_bytes = inputs.task.spec.limits.diff_file_mb * 1024 * 1024
    return capture_changes(snapshot, workspace, max_file_bytes=max_file_bytes)
