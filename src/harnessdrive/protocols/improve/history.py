"""One round of an improvement trial as the protocol keeps it, and the round section of the
prompt that tells the agent where things stand."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harnessdrive.protocols.improve.evaluator import COMMAND_VARIABLE
from harnessdrive.tasks.improve_models import ImproveSpec

RoundState = Literal["kept", "reverted", "carried", "failed", "interrupted"]


@dataclass(frozen=True)
class RoundEntry:
    """What one round did to the objective."""

    number: int
    status: str
    """The machinery's status of the round (``completed``, ``crashed``, ...)."""
    state: RoundState
    """``kept`` (a new best checkpoint), ``reverted`` (the next round starts from the best),
    ``carried`` (kept without being the best: ``keep_best = false``), ``failed`` (no value could
    be measured) or ``interrupted``."""
    value: float | None
    samples: tuple[float, ...]
    gate: str
    """The gate's outcome in this round's grading copy."""
    best: float
    """The best value after this round."""
    evaluator_calls: int
    note: str
    resumed: str | None = None
    """The agent session this round continued (``session = "resume"``); None when fresh."""

    def as_json(self) -> dict[str, Any]:
        return {
            "round": self.number,
            "status": self.status,
            "state": self.state,
            "value": self.value,
            "samples": list(self.samples),
            "gate": self.gate,
            "best": self.best,
            "evaluator_calls": self.evaluator_calls,
            "note": self.note,
            "resumed": self.resumed,
        }


def round_section(
    spec: ImproveSpec,
    number: int,
    baseline: float,
    best: float,
    done: Sequence[RoundEntry],
    evaluate: str | None = None,
) -> str:
    """The part of round ``number``'s prompt after the task's own prompt."""
    objective = spec.objective
    unit = f" {objective.unit}" if objective.unit else ""
    better = "lower" if objective.direction == "minimize" else "higher"
    lines = [
        "",
        f"## Round {number} of {spec.rounds}",
        "",
        f"The repository already works. Make the measured objective better: {better} is better.",
        f"- Baseline (untouched repository): {baseline:g}{unit}",
        f"- Best so far: {best:g}{unit}",
    ]
    if objective.target is not None:
        lines.append(f"- Target: {objective.target:g}{unit}")
    lines.append(
        "- Every round is measured after you finish, and the task's tests must still pass."
    )
    if evaluate is None:
        lines.append("- You cannot measure the objective yourself in this round.")
    else:
        lines.append(
            f"- You may measure your current state with `{evaluate}` (the same command is in "
            f"${COMMAND_VARIABLE}), at most {spec.evaluator.budget} time(s) in this round; "
            "it measures the objective only (it runs no tests) and prints the value only."
        )
    if spec.keep_best:
        lines.append(
            "- A round that is not better than the best is reverted: the next round starts "
            "from the best state."
        )
    for entry in done:
        shown = f"{entry.value:g}{unit}" if entry.value is not None else "not measured"
        lines.append(f"- Round {entry.number}: {shown}, tests {entry.gate}, {entry.note}")
    return "\n".join(lines) + "\n"
