"""Decide what to answer to one request: which scripted turn, a side reply, or an overrun.

Which turn: the request carries its conversation so far, and the server counts the scripted
replies already in it. A reply is recognised by the tool call ids we issued (they carry the
turn number) or, for a reply without tool calls, by its text containing the turn's text. So
the answer to a request does not depend on what came before it on the server: a retried
request gets the same turn, concurrent runs of one script do not disturb each other, and a
script serves any number of sequential runs without a reset.

Side requests: a request that offers no tools is not part of the conversation (session titles,
next-speaker checks) unless its prompt asks for text edits in aider's formats; nor is one for a
model named in `side_models`. It gets the script's side reply, or a minimal JSON value when it
demands JSON, and consumes no turn.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harnessdrive.testing.model_server.conversation import (
    ModelRequest,
    Reply,
    ToolCall,
    call_id,
    turn_of_call_id,
)
from harnessdrive.testing.model_server.script import EditFile, Script, Turn, Usage, WriteFile
from harnessdrive.testing.model_server.text_edits import (
    TextFormat,
    detect_text_format,
    render_text_actions,
)
from harnessdrive.testing.model_server.tools import render_actions, submit_call

TextEdits = Literal["auto", "off", "diff", "whole"]
Outcome = Literal["turn", "side", "overrun"]

# Where each CLI states its working directory in the prompt.
_WORKDIR_PATTERNS = (
    re.compile(r"Primary working directory: (\S+)"),  # Claude Code
    re.compile(r"<cwd>([^<]+)</cwd>"),  # Codex
    re.compile(r"Working directory: (\S+)"),  # opencode
    re.compile(r"Current working directory: (\S+)"),  # pi
    re.compile(r"working in the directory: (\S+)"),  # Qwen Code
    re.compile(r"Workspace Directories:\**\s*\n\s*- (\S+)"),  # Gemini CLI
)


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    turn: int | None
    reply: Reply


def decide(
    script: Script,
    request: ModelRequest,
    *,
    call_prefix: str,
    workdir: Path | None = None,
    text_edits: TextEdits = "auto",
    side_models: tuple[str, ...] = (),
) -> Decision:
    text_format = _text_format(request, text_edits)
    small_model = any(name in request.model for name in side_models)
    if small_model or (not request.tools and text_format is None):
        return Decision("side", None, _side_reply(script, request))
    workdir = workdir or discover_workdir(request.prompt_text)
    index = turns_played(script, request, text_format)
    if index >= len(script.turns):
        reply = Reply(script.overrun_text, _finish_calls(request, call_prefix, index), Usage())
        return Decision("overrun", None, reply)
    turn = script.turns[index]
    if text_format is not None:
        rendered = render_text_actions(turn.actions, text_format, workdir)
        text = "\n\n".join(filter(None, (turn.text, rendered)))
        return Decision("turn", index, Reply(text, (), turn.usage, turn.model))
    calls = render_actions(turn.actions, request, workdir, lambda k: call_id(call_prefix, index, k))
    if not calls:
        calls = _finish_calls(request, call_prefix, index)
    return Decision("turn", index, Reply(turn.text or "", calls, turn.usage, turn.model))


def turns_played(script: Script, request: ModelRequest, text_format: TextFormat | None) -> int:
    """How many scripted turns the request's conversation already holds."""
    played = 0
    for past in request.history:
        marked = [t for t in map(turn_of_call_id, past.call_ids) if t is not None]
        if marked:
            played = max(played, max(marked) + 1)
            continue
        if played < len(script.turns):
            signature = _normalise(_signature(script.turns[played], text_format))
            if signature and signature in _normalise(past.text):
                played += 1
    return played


def discover_workdir(prompt_text: str) -> Path | None:
    for pattern in _WORKDIR_PATTERNS:
        for match in pattern.finditer(prompt_text):
            candidate = Path(match.group(1).strip().rstrip("/.,;:"))
            if candidate.is_absolute() and candidate.is_dir():
                return candidate
    return None


def _text_format(request: ModelRequest, text_edits: TextEdits) -> TextFormat | None:
    if request.tools or text_edits == "off":
        return None
    if text_edits == "auto":
        return detect_text_format(request)
    return text_edits


def _signature(turn: Turn, text_format: TextFormat | None) -> str:
    if turn.text:
        return turn.text
    if text_format is None:
        return ""
    for action in turn.actions:
        if isinstance(action, WriteFile):
            return action.content
        if isinstance(action, EditFile):
            return action.new
    return ""


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _finish_calls(request: ModelRequest, call_prefix: str, index: int) -> tuple[ToolCall, ...]:
    finish = submit_call(request, call_id(call_prefix, index, 0))
    return (finish,) if finish is not None else ()


def _side_reply(script: Script, request: ModelRequest) -> Reply:
    usage, model = script.side_reply.usage, script.side_reply.model
    if request.wants_json or request.json_schema is not None:
        return Reply(json.dumps(json_instance(request.json_schema or {})), (), usage, model)
    return Reply(script.side_reply.text, (), usage, model)


def json_instance(schema: dict[str, Any]) -> Any:
    """A small value that fits a JSON schema; enums prefer "user" (ends next-speaker checks)."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return "user" if "user" in enum else enum[0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    kind = str(kind).lower() if kind else ("object" if "properties" in schema else "string")
    if kind == "object":
        properties = schema.get("properties") or {}
        return {
            name: json_instance(sub if isinstance(sub, dict) else {})
            for name, sub in properties.items()
        }
    simple: dict[str, Any] = {"array": [], "boolean": False, "integer": 0, "number": 0}
    return simple.get(kind, "")
