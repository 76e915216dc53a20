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
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessdrive.store.atomic import write_atomic

CHECKPOINT_FILE = "checkpoint.json"
CHECKPOINTED_FOLDER = "checkpointed"
"""In an attempt's folder: the recorded rounds' files as of its last checkpoint, so that a killed
attempt's rounds keep their prompts, diffs and logs, and a resumed attempt carries them on."""


@dataclass(frozen=True)
class RoundCheckpoint:
    protocol: str
    task_fingerprint: str
    rounds: int
    """Rounds completed and recorded in ``state``."""
    state: dict[str, Any]
    elapsed: float = 0.0
    """Seconds the trial had run when the checkpoint was taken, earlier attempts' included."""
    files: Path | None = None
    """Where the files of the recorded rounds are (not saved: the driver knows where it keeps
    them, :data:`CHECKPOINTED_FOLDER` of the attempt)."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "protocol": self.protocol,
                "task_fingerprint": self.task_fingerprint,
                "rounds": self.rounds,
                "state": self.state,
                "elapsed": self.elapsed,
            }
        )


def write_checkpoint(path: Path, checkpoint: RoundCheckpoint) -> None:
    """Write ``checkpoint`` to ``path`` atomically (the driver's ``on_round``)."""
    write_atomic(path, checkpoint.to_json().encode("utf-8"))


def keep_files(folder: Path, checkpoint: RoundCheckpoint) -> None:
    """Copy the files of ``checkpoint``'s rounds into ``folder`` (replacing what was there):
    regular files and folders only, never a link."""
    if checkpoint.files is None or not checkpoint.files.is_dir():
        return
    staging = folder.with_name(folder.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(checkpoint.files, staging, ignore=_links)
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(staging, folder)


def restore_files(kept: Path, into: Path) -> None:
    """Copy the kept files of earlier rounds into ``into``, a new attempt's files."""
    if kept.is_dir() and not kept.is_symlink():
        shutil.copytree(kept, into, ignore=_links, dirs_exist_ok=True)


def _links(folder: str, names: list[str]) -> list[str]:
    return [name for name in names if os.path.islink(os.path.join(folder, name))]


def read_checkpoint(path: Path) -> RoundCheckpoint | None:
    """The checkpoint at ``path``; None when there is none or it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return RoundCheckpoint(
            protocol=str(data["protocol"]),
            task_fingerprint=str(data["task_fingerprint"]),
            rounds=int(data["rounds"]),
            state=dict(data["state"]),
            elapsed=max(float(data.get("elapsed", 0.0)), 0.0),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
