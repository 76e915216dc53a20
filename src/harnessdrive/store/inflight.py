"""In-flight records: written before an agent starts, removed once its trial is recorded.

A record left behind means the driver died mid-trial (``kill -9``, a power cut). The next run
turns it into an ``interrupted`` result charged at the record's high estimate, removes the
workspace if it is ours, and runs the trial again.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from harnessdrive.store.atomic import write_atomic
from harnessdrive.store.results import TrialResult


class InflightRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    trial_id: str
    attempt: int
    started: str
    scratch: str
    """Our temporary folder for the trial (workspace, private HOME), removed on recovery; empty
    when a worker makes it instead (a killed driver's scratch roots are swept as a whole)."""
    pid: int
    interrupted: TrialResult
    """The result to record if this trial never finishes: ``interrupted``, charged the high
    cost estimate of a run that was cut off."""


SCRATCH_MARKER = ".harnessdrive-scratch"


def write_inflight(path: Path, record: InflightRecord) -> None:
    # A killed driver leaves the page cache intact, so no fsync is needed for what this record
    # is for; only result.json, the source of truth, is flushed to disk.
    write_atomic(path, record.model_dump_json(indent=2), durable=False)


def read_inflight(folder: Path) -> list[tuple[Path, InflightRecord | None]]:
    """Every record in ``folder``; an unreadable one comes back as None (still to be removed)."""
    if not folder.is_dir():
        return []
    found: list[tuple[Path, InflightRecord | None]] = []
    for path in sorted(folder.glob("*.json")):
        try:
            found.append((path, InflightRecord.model_validate(json.loads(path.read_text()))))
        except (OSError, ValueError, ValidationError):
            found.append((path, None))
    return found


def remove_inflight(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def is_our_scratch(folder: Path) -> bool:
    """Only folders we created (they hold our marker file) are ever deleted on recovery."""
    return folder.is_dir() and (folder / SCRATCH_MARKER).is_file()
