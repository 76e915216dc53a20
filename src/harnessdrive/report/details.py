"""What a trial's drill-down shows, read from its folder and cut to a size budget.

The HTML report (and the JSON it is drawn from) holds, per trial, the head of its diff, the tail
of its test output, an excerpt of its transcript and its cost per model. Each text is cut to
a share of one budget for the whole report, so a run of 1,000 trials stays a few MB; a cut
text says so and the report links to the whole file in the trial's folder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import TrialResult
from harnessdrive.workspace.names import NameText

TEXT_BUDGET = 3_000_000
"""Characters of diff, test output and transcript over every trial of one report."""
PER_TRIAL_MAX = 24_000
"""Characters one trial may hold when the budget allows more."""
PER_TRIAL_MIN = 600
"""What every trial keeps however many there are: the verdict always shows its evidence."""
TEST_LOG = "grade-tests.log"
TRANSCRIPT_EVENTS = 40


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Excerpt(_Model):
    text: NameText
    """Raw bytes that are not UTF-8 are escaped as in result.json (docs/results.md)."""
    file: str
    """The whole text's file, relative to the trial's folder."""
    chars: int
    """How long the whole text is."""
    cut: bool


class TrialDetail(_Model):
    trial_id: str
    folder: str
    """The trial's folder relative to the results folder (``trials/<trial_id>``)."""
    diff: Excerpt | None = None
    tests: Excerpt | None = None
    """The tail of the deciding test run's output."""
    transcript: tuple[str, ...] = ()
    """One line per event, the first and last of them when there are many."""
    events: int = 0
    cost: tuple[str, ...] = ()
    """One line per model: calls, tokens and what they cost."""
    protocol: str | None = None
    """The trial protocol that ran it."""
    kind_details: dict[str, JsonValue] = Field(default_factory=dict)
    """The deciding verdict's grader-kind data (``Verdict.details``), as the kind wrote it."""


def trial_details(
    results: Path, trials: Sequence[TrialResult], budget: int = TEXT_BUDGET
) -> tuple[TrialDetail, ...]:
    """The drill-down of each trial recorded in the results folder ``results``, every text
    within its share of ``budget``."""
    share = max(PER_TRIAL_MIN, min(PER_TRIAL_MAX, budget // max(1, len(trials))))
    return tuple(_detail(result, results, share) for result in trials)


def attempt_folder(results: Path, result: TrialResult) -> Path:
    """The folder of the attempt ``result`` records: the trial's own, or one under
    ``previous/`` when a later attempt has been recorded since."""
    root = results / "trials" / result.trial_id
    earlier = root / "previous" / str(result.attempt)
    return earlier if (earlier / "result.json").is_file() else root


def _detail(result: TrialResult, results: Path, share: int) -> TrialDetail:
    folder = attempt_folder(results, result)
    paths = TrialPaths(folder)
    events = _events(paths.transcript)
    return TrialDetail(
        trial_id=result.trial_id,
        folder=folder.relative_to(results).as_posix(),
        diff=_excerpt(paths.diff, "diff.patch", share // 2, head=True),
        tests=_excerpt(folder / TEST_LOG, TEST_LOG, share // 4, head=False),
        transcript=_transcript(events, share // 4),
        events=len(events),
        cost=tuple(
            f"{m.model}: {m.calls} call(s), {m.usage.total} tokens, "
            + ("unpriced" if m.usd is None else f"${m.usd:.4f}")
            for m in result.cost.models
        ),
        protocol=result.protocol,
        kind_details=dict(result.grading.details) if result.grading is not None else {},
    )


def _excerpt(path: Path, name: str, limit: int, *, head: bool) -> Excerpt | None:
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            if not head and size > limit * 4:
                handle.seek(size - limit * 4)
            raw = handle.read(limit * 4)
    except OSError:
        return None
    text = raw.decode("utf-8", errors="surrogateescape")
    cut = size > len(raw) or len(text) > limit
    text = text[:limit] if head else text[-limit:]
    return Excerpt(text=text, file=name, chars=size, cut=cut)


TRANSCRIPT_MAX_BYTES = 64 * 1024 * 1024
"""A transcript larger than this is not parsed for its excerpt (the link still leads to it)."""


def _events(path: Path) -> list[dict[str, object]]:
    try:
        if path.stat().st_size > TRANSCRIPT_MAX_BYTES:
            return []
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return []
    events = data.get("events") if isinstance(data, dict) else None
    return [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []


def _transcript(events: Sequence[dict[str, object]], limit: int) -> tuple[str, ...]:
    half = TRANSCRIPT_EVENTS // 2
    chosen = events if len(events) <= TRANSCRIPT_EVENTS else [*events[:half], *events[-half:]]
    room = max(80, limit // max(1, len(chosen))) if chosen else 0
    lines: list[str] = []
    used = 0
    for index, event in enumerate(chosen):
        if len(events) > len(chosen) and index == half:
            lines.append(f"[... {len(events) - len(chosen)} more events ...]")
        line = _event_line(event)[:room]
        used += len(line)
        if used > limit:
            lines.append(f"[... {len(chosen) - index} more events cut ...]")
            break
        lines.append(line)
    return tuple(lines)


def _event_line(event: dict[str, object]) -> str:
    kind = str(event.get("kind", "?"))
    text = " ".join(str(event.get("text", "")).split())
    data = event.get("data")
    if kind == "command" and isinstance(data, dict) and "exit_code" in data:
        text += f"  (exit {data['exit_code']})"
    return f"{kind}: {text}"
