"""Files written by a newer harnessdrive are refused by name, never misread or skipped unseen."""

from __future__ import annotations

import re
from pathlib import Path

from harnessdrive.errors import UserError

RUN_SCHEMA = "harnessdrive-run-2"
"""A run manifest (``runs/<run_id>.json``); 2 added the suite's identity and counted attempts."""

_VERSIONED = re.compile(r"^(?P<kind>harnessdrive-[a-z]+)-(?P<number>\d+)$")


def schema_number(schema: str) -> tuple[str, int] | None:
    """``harnessdrive-result-2`` -> ``("harnessdrive-result", 2)``."""
    found = _VERSIONED.match(schema)
    return (found["kind"], int(found["number"])) if found else None


def refuse_newer(data: object, ours: str, path: Path) -> None:
    """Raise when ``data`` holds a ``schema`` of the same kind as ``ours`` but a higher number."""
    if not isinstance(data, dict) or not isinstance(data.get("schema"), str):
        return
    theirs, known = schema_number(data["schema"]), schema_number(ours)
    if theirs and known and theirs[0] == known[0] and theirs[1] > known[1]:
        raise UserError(
            f"{path} was written by a newer harnessdrive ({data['schema']}; this one reads up "
            f"to {ours}): upgrade harnessdrive to use this results folder"
        )
