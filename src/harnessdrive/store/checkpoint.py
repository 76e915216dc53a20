"""A trial's round checkpoint: what a protocol needs to resume after its driver was killed.

A protocol with several rounds hands the trial core its state after each round; the core wraps
it with the protocol's name and the task's fingerprint and calls the job's ``on_round``, which
the driver sets to write ``checkpoint.json`` into the trial's attempt folder (atomically, so a
kill leaves the last complete one). When the same command runs the trial again, the driver hands
that checkpoint back with the job and the protocol continues after its last recorded round.
The state is plain JSON, so an executor on other machines can carry it both ways.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessdrive.store.atomic import write_atomic

CHECKPOINT_FILE = "checkpoint.json"


@dataclass(frozen=True)
class RoundCheckpoint:
    protocol: str
    task_fingerprint: str
    rounds: int
    """Rounds completed and recorded in ``state``."""
    state: dict[str, Any]

    def to_json(self) -> str:
        return json.dumps(
            {
                "protocol": self.protocol,
                "task_fingerprint": self.task_fingerprint,
                "rounds": self.rounds,
                "state": self.state,
            }
        )


def write_checkpoint(path: Path, checkpoint: RoundCheckpoint) -> None:
    """Write ``checkpoint`` to ``path`` atomically (the driver's ``on_round``)."""
    write_atomic(path, checkpoint.to_json().encode("utf-8"))


def read_checkpoint(path: Path) -> RoundCheckpoint | None:
    """The checkpoint at ``path``; None when there is none or it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return RoundCheckpoint(
            protocol=str(data["protocol"]),
            task_fingerprint=str(data["task_fingerprint"]),
            rounds=int(data["rounds"]),
            state=dict(data["state"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
