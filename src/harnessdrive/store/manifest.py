"""A run manifest, ``runs/<run_id>.json``: what a run planned and which attempts it counted.

Written by the run driver when the run starts and again when it ends. Readers that only know
the JSON (report/loading.py) keep working: the fields and their order are those of schema
``harnessdrive-run-2``, with ``trust`` added at the end (older readers ignore it).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from harnessdrive.store.atomic import write_atomic
from harnessdrive.store.schema import RUN_SCHEMA
from harnessdrive.store.trust import TaskTrust
from harnessdrive.tasks.models import VariantSpec


class RunManifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: str = Field(default=RUN_SCHEMA, alias="schema")
    run_id: str
    suite: str
    suite_folder: str
    suite_id: str
    suite_version: str
    harnessdrive_version: str
    variants: tuple[VariantSpec, ...]
    repeat: int
    jobs: int
    created: str
    updated: str
    finished: str | None = None
    """When the run ended (stopped or done); None while it runs, or if its driver was killed."""
    trials: tuple[str, ...]
    attempts: dict[str, int] = Field(default_factory=dict)
    """Which attempt of each trial this run counts, so its report never shows a later one."""
    trust: dict[str, TaskTrust] | None = None
    """Each task's trust by its audit when the run started (store/trust.py), by task id; None
    (or absent, in a manifest written before runs recorded it): not known."""

    @field_serializer("variants")
    def _variants_as_given(self, variants: tuple[VariantSpec, ...]) -> list[dict[str, Any]]:
        return [v.model_dump(mode="json", exclude_defaults=True) for v in variants]

    def write(self, path: Path) -> None:
        text = json.dumps(self.model_dump(mode="json", by_alias=True), indent=2)
        write_atomic(path, text + "\n")


def created_at(path: Path) -> str | None:
    """When the run recorded in ``path`` was first started; None without a readable one."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        created = json.loads(path.read_text())["created"]
        return created if isinstance(created, str) else None
    return None
