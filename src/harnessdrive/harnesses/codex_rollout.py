"""What Codex's rollout adds to its ``exec --json`` stream: times, calls' places and patches.

The stream (whose items make the transcript's events) carries no time, no model call and, for a
file change, only its paths and kinds. The rollout logs the same completed items, in the same
order and each with a time (``event_msg`` ``item_completed``; a file change with its diff or the
new file's content), and, before each ``token_usage_record`` (one model call), the answer's
output items (``response_item``) whose ids the completed items carry: an agent message its
message id, a tool item its call id. So each call begins at the first stream item it produced,
and each stream item gets its rollout time. When the two lists of items do not line up, nothing
is placed or timed (a wrong time would be worse than none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from harnessdrive.harnesses.cli.recording import TranscriptBuilder, logged_time, mapping

_ANSWER_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_MATCHED = frozenset(
    {"agent_message", "file_change", "command_execution", "mcp_tool_call", "web_search"}
)


@dataclass(frozen=True)
class StreamItem:
    """One completed item of the stream and the events it became (``start`` to ``end``)."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class _Completed:
    item: dict[str, Any]
    time: str | None


def place_calls(
    lines: list[dict[str, Any]], items: list[StreamItem], builder: TranscriptBuilder
) -> None:
    """Times the stream's events, places the calls already recorded (one per
    ``token_usage_record`` of ``lines``, in order) and adds each file change's diff."""
    completed: list[_Completed] = []
    call_of: dict[str, int] = {}
    answer: list[str] = []
    calls = 0
    for line in lines:
        payload = mapping(line.get("payload"))
        kind = line.get("type")
        if kind == "response_item":
            if payload.get("type") == "message" and payload.get("role") == "assistant":
                answer.append(str(payload.get("id", "")))
            elif payload.get("type") in _ANSWER_ITEMS:
                answer.append(str(payload.get("call_id", "")))
        elif kind == "event_msg" and payload.get("type") == "item_completed":
            item = mapping(payload.get("item"))
            if _snake(str(item.get("type", ""))) in _MATCHED:
                completed.append(_Completed(item, logged_time(line.get("timestamp"))))
        elif kind == "token_usage_record":
            call_of.update({made: calls for made in answer if made})
            answer = []
            calls += 1
    matched = [item for item in items if item.kind in _MATCHED]
    if [_snake(str(c.item.get("type", ""))) for c in completed] != [i.kind for i in matched]:
        return
    first = len(builder.calls) - calls
    if first < 0:
        return
    starts: dict[int, int] = {}
    for stream_item, logged in zip(matched, completed, strict=True):
        builder.stamp(stream_item.start, stream_item.end, logged.time)
        made = call_of.get(str(logged.item.get("id", "")))
        if made is not None and made not in starts:
            starts[made] = stream_item.start
        if stream_item.kind == "file_change":
            _add_diffs(builder, stream_item, mapping(logged.item.get("changes")))
    times = _call_times(lines)
    for made in range(calls):
        call = builder.calls[first + made]
        update: dict[str, Any] = {"position": starts.get(made)}
        if made < len(times):
            update["time"] = times[made]
        builder.calls[first + made] = call.model_copy(update=update)


def _call_times(lines: list[dict[str, Any]]) -> list[str | None]:
    return [
        logged_time(line.get("timestamp"))
        for line in lines
        if line.get("type") == "token_usage_record"
    ]


def _add_diffs(builder: TranscriptBuilder, item: StreamItem, changes: dict[str, Any]) -> None:
    """Each file change of the item gets the diff the rollout logged for its path; the
    ``apply_patch`` call's input gets them too, so a reader sees the patch, not only paths."""
    diffs = {
        builder.relative(path): diff
        for path, change in changes.items()
        if (diff := change_diff(mapping(change)))
    }
    if not diffs:
        return
    for index in range(item.start, item.end):
        event = builder.events[index]
        if event.kind == "file_change" and event.text in diffs:
            data = {**event.data, "diff": diffs[event.text]}
        elif event.kind == "tool_call" and isinstance(event.data.get("input"), list):
            data = {
                **event.data,
                "input": [_with_diff(builder, c, diffs) for c in event.data["input"]],
            }
        else:
            continue
        builder.events[index] = event.model_copy(update={"data": data})


def _with_diff(builder: TranscriptBuilder, change: Any, diffs: dict[str, str]) -> Any:
    if not isinstance(change, dict):
        return change
    diff = diffs.get(builder.relative(str(change.get("path", ""))))
    return {**change, "diff": diff} if diff else change


def change_diff(change: dict[str, Any]) -> str:
    """A unified diff body of one logged change: Codex's own for an update, the whole content
    as added (or removed) lines for a new (or deleted) file."""
    kind = change.get("type")
    if kind == "update":
        diff = str(change.get("unified_diff") or "")
        moved = change.get("move_path")
        return f"renamed to {moved}\n{diff}" if moved else diff
    content = change.get("content")
    if kind in ("add", "delete") and isinstance(content, str):
        lines = content.splitlines()
        sign, span = (
            ("+", f"-0,0 +1,{len(lines)}") if kind == "add" else ("-", f"-1,{len(lines)} +0,0")
        )
        return f"@@ {span} @@\n" + "".join(f"{sign}{line}\n" for line in lines)
    return ""


def _snake(name: str) -> str:
    """``AgentMessage`` (the rollout's item type) as ``agent_message`` (the stream's)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
