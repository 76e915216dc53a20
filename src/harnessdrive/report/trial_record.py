"""A trial's whole record for the HTML page: its prompt, every transcript event, its full diff
and test output, and its review; read from the attempt's folder.

Unlike the excerpts of :mod:`harnessdrive.report.details` nothing is cut here: the page embeds
these compressed and renders them on demand, paginating long texts. A pathological file is
still bounded (``RECORD_MAX_CHARS`` per text) so one trial cannot make the page unopenable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import TrialResult
from harnessdrive.store.review import read_review

RECORD_MAX_CHARS = 2_000_000
"""One text (diff, test log, prompt, one event's output) longer than this keeps its head."""
EVENTS_MAX_BYTES = 64 * 1024 * 1024
TEST_LOG = "grade-tests.log"
PLANTED_LIST = "junit-tests.canaries.json"


@dataclass(frozen=True)
class TrialRecord:
    prompt: str = ""
    events: tuple[dict[str, Any], ...] = ()
    diff: str = ""
    tests: str = ""
    review: dict[str, str] = field(default_factory=dict)
    """``decision`` and ``note`` of the current review, when there is one."""
    planted: tuple[str, ...] = ()
    """The grader's own checks planted to fail in the deciding test run (never the agent's)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "events": list(self.events),
            "diff": self.diff,
            "tests": self.tests,
            "planted": list(self.planted),
        }


def read_record(folder: Path, result: TrialResult) -> TrialRecord:
    paths = TrialPaths(folder)
    review = read_review(paths, result)
    return TrialRecord(
        prompt=_text(folder / "prompt.md"),
        events=_events(paths.transcript),
        diff=_text(paths.diff),
        tests=_text(folder / TEST_LOG),
        review={"decision": review.decision, "note": review.note} if review else {},
        planted=_planted(folder / PLANTED_LIST),
    )


def _planted(path: Path) -> tuple[str, ...]:
    try:
        rows = json.loads(path.read_text(encoding="utf-8", errors="replace")[:1_000_000])
    except (OSError, ValueError):
        return ()
    if not isinstance(rows, list):
        return ()
    return tuple(
        "::".join(p for p in (str(r.get("container", "")), str(r.get("name", ""))) if p)
        for r in rows
        if isinstance(r, dict)
    )


def _text(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            raw = handle.read(RECORD_MAX_CHARS * 4)
    except OSError:
        return ""
    return raw.decode("utf-8", errors="replace")[:RECORD_MAX_CHARS]


def _events(path: Path) -> tuple[dict[str, Any], ...]:
    try:
        if path.stat().st_size > EVENTS_MAX_BYTES:
            return ()
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return ()
    events = data.get("events") if isinstance(data, dict) else None
    if not isinstance(events, list):
        return ()
    return tuple(
        {"kind": str(e.get("kind", "?")), "text": str(e.get("text", ""))[:RECORD_MAX_CHARS]}
        | ({"data": e["data"]} if isinstance(e.get("data"), dict) and e["data"] else {})
        for e in events
        if isinstance(e, dict)
    )
