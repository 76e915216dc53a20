"""Shared pieces of the session-log parsers: JSONL reading and a Transcript builder."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from harnessdrive.errors import HarnessError
from harnessdrive.transcript.models import Event, EventKind, ModelCall, Transcript, Usage

EXCERPT_CHARS = 2000


class SessionLogError(HarnessError):
    """The session log a run should have written is missing, or belongs to another session."""


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL text; other lines (warnings, banners) are skipped."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return json_lines(path.read_text(encoding="utf-8", errors="replace"))


def only_file(paths: Iterable[Path], what: str) -> Path:
    """The one file a run wrote; none or several is a SessionLogError."""
    found = sorted(p for p in paths if p.is_file())
    if not found:
        raise SessionLogError(f"no {what} was written")
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise SessionLogError(f"expected one {what}, found {len(found)}: {names}")
    return found[0]


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more]"


def as_int(value: Any) -> int:
    """A token count from a log field that may be missing, null or a float."""
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, int | float):
        return int(value)
    return 0


def logged_time(value: Any, *, epoch: Literal["s", "ms"] | None = None) -> str | None:
    """A time a log wrote, as ISO 8601 in UTC to the millisecond; ``None`` when it is missing,
    unreadable or has no time zone (guessing one would invent a time). ``epoch`` says the unit of
    a log that writes numbers (``ms``: opencode, pi); without it a number is not a time."""
    stamp: datetime | None = None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        if epoch is None:
            return None
        try:
            stamp = datetime.fromtimestamp(value / 1000 if epoch == "ms" else value, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    elif isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if stamp.tzinfo is None:
            return None
    if stamp is None:
        return None
    return stamp.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TranscriptBuilder:
    """Collects events and model calls in order, then makes the Transcript."""

    def __init__(self, workspace: Path | None = None) -> None:
        self.workspace = workspace
        self.events: list[Event] = []
        self.calls: list[ModelCall] = []
        self.tool_calls = 0
        self.permission_denials = 0
        self.errors: list[str] = []
        self._time: str | None = None

    @contextmanager
    def timed(self, time: str | None) -> Iterator[None]:
        """Events recorded inside carry ``time`` (from :func:`logged_time`); outside, none."""
        self._time = time
        try:
            yield
        finally:
            self._time = None

    def mark(self) -> int:
        """The position the next event will have: where a model call's answer begins."""
        return len(self.events)

    def stamp(self, start: int, end: int, time: str | None) -> None:
        """Gives the events ``start`` to ``end`` (exclusive) a time learnt after they were
        recorded (Codex's stream has none; its session log does), where they have none."""
        if time is None:
            return
        for index in range(max(start, 0), min(end, len(self.events))):
            if self.events[index].time is None:
                self.events[index] = self.events[index].model_copy(update={"time": time})

    def event(self, kind: EventKind, text: str = "", **data: Any) -> None:
        self.events.append(Event(kind=kind, text=text, data=data, time=self._time))

    def message(self, text: str) -> None:
        if text.strip():
            self.event("message", text)

    def tool_call(self, name: str, arguments: Any = None, call_id: str | None = None) -> None:
        self.tool_calls += 1
        data: dict[str, Any] = {}
        if arguments is not None:
            data["input"] = arguments
        if call_id:
            data["id"] = call_id
        self.event("tool_call", name, **data)

    def tool_result(
        self, call_id: str | None, output: Any, *, is_error: bool = False, name: str = ""
    ) -> None:
        data: dict[str, Any] = {"output": excerpt(output) if output is not None else ""}
        if call_id:
            data["id"] = call_id
        if is_error:
            data["error"] = True
        self.event("tool_result", name, **data)

    def command(self, command: str, exit_code: int | None, output: Any = None) -> None:
        data: dict[str, Any] = {"exit_code": exit_code}
        if output:
            data["output"] = excerpt(output)
        self.event("command", command, **data)

    def file_change(self, path: str, change: str = "") -> None:
        path = self.relative(path)
        if change:
            self.event("file_change", path, change=change)
        else:
            self.event("file_change", path)

    def relative(self, path: str) -> str:
        """A path inside the workspace as a relative one; anything else as it is."""
        if self.workspace is None or not path:
            return path
        try:
            return Path(path).relative_to(self.workspace).as_posix()
        except ValueError:
            return path

    def error(self, text: str, **data: Any) -> None:
        if text.strip():
            self.errors.append(text.strip())
            self.event("error", text.strip(), **data)

    def retry(self, text: str, **data: Any) -> None:
        self.event("retry", text, **data)

    def denial(self, text: str, **data: Any) -> None:
        self.permission_denials += 1
        self.event("note", f"permission denied: {text}", **data)

    def call(
        self,
        model: str,
        usage: Usage,
        provider: str | None,
        agent: str | None = None,
        *,
        time: str | None = None,
        position: int | None = None,
    ) -> None:
        """One model call; ``position`` is :meth:`mark` taken before the events of its answer
        were recorded, ``None`` where the log cannot say which events it produced."""
        self.calls.append(
            ModelCall(
                model=model,
                usage=usage,
                provider=provider,
                agent=agent,
                time=time,
                position=position,
            )
        )

    def compaction(self, trigger: str, **data: Any) -> None:
        """The CLI compacted its context (``trigger``: ``auto`` or ``manual`` where it says)."""
        self.event("note", f"context compacted ({trigger})", compaction=trigger, **data)

    def build(
        self,
        *,
        session_id: str | None = None,
        session_log: str | None = None,
        turns: int | None = None,
        final_message: str | None = None,
        reported_cost_usd: float | None = None,
        permission_denials: int | None = None,
        error: str | None = None,
    ) -> Transcript:
        return Transcript(
            events=tuple(self.events),
            calls=tuple(self.calls),
            session_id=session_id,
            session_log=session_log,
            model=main_model(self.calls),
            turns=turns if turns is not None else (len(self.calls) or None),
            tool_calls=self.tool_calls,
            permission_denials=(
                permission_denials if permission_denials is not None else self.permission_denials
            ),
            reported_cost_usd=reported_cost_usd,
            final_message=final_message,
            error=error if error is not None else (self.errors[-1] if self.errors else None),
        )


def position_at(events: Sequence[Event], time: str | None) -> int | None:
    """Where a call logged apart from the events (a subagent's) falls among them: before the
    first event logged after it. ``None`` without a time."""
    if time is None:
        return None
    later = (i for i, event in enumerate(events) if event.time is not None and event.time > time)
    return next(later, len(events))


def main_model(calls: Iterable[ModelCall]) -> str | None:
    """The model that used the most tokens (the first one on a tie)."""
    totals: dict[str, int] = {}
    for call in calls:
        totals[call.model] = totals.get(call.model, 0) + call.usage.total
    if not totals:
        return None
    return max(totals, key=lambda model: totals[model])


def openai_usage(
    prompt: int, cached: int, completion: int, reasoning: int, cache_write: int = 0
) -> Usage:
    """Usage from OpenAI-style counts: the prompt includes cache reads (and writes), the
    completion includes reasoning."""
    return Usage(
        input=max(prompt - cached - cache_write, 0),
        cache_read=cached,
        cache_write=cache_write,
        output=completion,
        reasoning=reasoning,
    )


def litellm_usage(usage: dict[str, Any]) -> Usage:
    """Usage as litellm reports it (aider, mini-swe-agent): OpenAI's shape, plus Anthropic's
    cache fields when the model is Claude. ``prompt_tokens`` includes cache reads and writes."""
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    cached = as_int(usage.get("cache_read_input_tokens")) or as_int(
        prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else 0
    )
    reasoning = as_int(
        completion_details.get("reasoning_tokens") if isinstance(completion_details, dict) else 0
    )
    return openai_usage(
        prompt=as_int(usage.get("prompt_tokens")),
        cached=cached,
        cache_write=as_int(usage.get("cache_creation_input_tokens")),
        completion=as_int(usage.get("completion_tokens")),
        reasoning=reasoning,
    )


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one: logs are read defensively."""
    return value if isinstance(value, dict) else {}
