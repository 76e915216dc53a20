"""The single-attempt protocol: the agent works once in a fresh workspace, then is graded."""

from __future__ import annotations

from harnessdrive.protocols.base import ProtocolInputs, ProtocolOutcome
from harnessdrive.protocols.round import agent_status, run_round

__all__ = ["SingleAttempt", "agent_status"]


class SingleAttempt:
    """One round: the trial's status, outcome and verdict are that round's."""

    name = "single"

    def run(self, inputs: ProtocolInputs) -> ProtocolOutcome:
        only = run_round(
            inputs.harness,
            inputs.request,
            inputs.snapshot,
            lambda changes: inputs.grade(changes, 1),
            diff_path=inputs.round_paths(1).diff,
            stop=inputs.stop,
        )
        return ProtocolOutcome.of_round(only)
