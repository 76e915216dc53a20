"""A person's review of a passing trial's change, stored beside its result as ``review.json``.

Tests check behaviour, not quality: a reviewer accepts or rejects each passing diff, and the
scoreboard shows accepted passes beside passes. A review names the attempt and a hash of the
diff it judged, so a trial run again is not covered by the old review (docs/results.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harnessdrive.errors import UserError
from harnessdrive.store.atomic import write_atomic
from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import TrialResult

REVIEW_FILE = "review.json"
REVIEW_SCHEMA = "harnessdrive-review-1"

Decision = Literal["accepted", "rejected"]


class Review(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: str = Field(default=REVIEW_SCHEMA, alias="schema")
    trial_id: str
    attempt: int
    decision: Decision
    note: str = ""
    reviewer: str = ""
    reviewed: str
    """UTC, ISO 8601."""
    diff_sha256: str
    """The hash of the ``diff.patch`` that was judged."""


def diff_hash(paths: TrialPaths) -> str:
    data = paths.diff.read_bytes() if paths.diff.is_file() else b""
    return hashlib.sha256(data).hexdigest()


def record_review(
    paths: TrialPaths,
    result: TrialResult,
    decision: Decision,
    *,
    note: str = "",
    reviewer: str = "",
) -> Review:
    """Store a decision on ``result``'s change; only a passing trial's change is reviewed."""
    if result.outcome != "pass":
        raise UserError(
            f"{result.trial_id} did not pass ({result.outcome}); only passes are reviewed"
        )
    review = Review(
        trial_id=result.trial_id,
        attempt=result.attempt,
        decision=decision,
        note=note,
        reviewer=reviewer,
        reviewed=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        diff_sha256=diff_hash(paths),
    )
    write_atomic(paths.root / REVIEW_FILE, review.model_dump_json(by_alias=True, indent=2) + "\n")
    return review


def read_review(paths: TrialPaths, result: TrialResult) -> Review | None:
    """The review of this attempt's change, if one was stored and still matches its diff."""
    file = paths.root / REVIEW_FILE
    if not file.is_file():
        return None
    try:
        review = Review.model_validate_json(file.read_bytes())
    except (ValidationError, OSError):
        return None
    current = review.attempt == result.attempt and review.trial_id == result.trial_id
    return review if current and review.diff_sha256 == diff_hash(paths) else None


def decisions(results: Iterable[TrialResult], trials: Path) -> dict[str, Decision]:
    """Trial id -> the current review's decision, for the trials of ``results`` that have one;
    ``trials`` is the results folder's ``trials/``."""
    found: dict[str, Decision] = {}
    for result in results:
        review = read_review(TrialPaths(trials / result.trial_id), result)
        if review is not None:
            found[result.trial_id] = review.decision
    return found
