"""Map one HTTP request to an answer: which protocol, which turn, which bytes.

Nothing here touches sockets; `server.py` reads the request and writes what comes back.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harnessdrive.testing.model_server import (
    anthropic,
    gemini,
    openai_chat,
    openai_responses,
)
from harnessdrive.testing.model_server.conversation import ModelRequest, Reply
from harnessdrive.testing.model_server.player import Decision, TextEdits, decide
from harnessdrive.testing.model_server.recording import RecordedRequest, RequestKind
from harnessdrive.testing.model_server.script import Script

_GEMINI_PATH = re.compile(r"^/(?:v1beta|v1alpha|v1)/models/([^:]+):([A-Za-z]+)$")
_GEMINI_MODEL = re.compile(r"^/(?:v1beta|v1alpha|v1)/models/([^:/]+)$")


@dataclass(frozen=True)
class Mount:
    """A script and the settings it is played with, under one URL prefix."""

    script: Script | None
    workdir: Path | None = None
    text_edits: TextEdits = "auto"
    side_models: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answer:
    """What to send: a JSON body, an SSE stream, or nothing; and what to record."""

    status: int
    record: RecordedRequest
    json_body: Any = None
    # SSE frames as (event name or None, data); sent chunked, one chunk per event.
    events: list[tuple[str | None, Any]] = field(default_factory=list)
    stream: bool = False


@dataclass(frozen=True)
class Incoming:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    mount_name: str


class ScriptMissingError(RuntimeError):
    """A generation request reached a mount that has no script."""


def answer(incoming: Incoming, mount: Mount, models: tuple[str, ...]) -> Answer:
    method, path = incoming.method, incoming.path
    if method == "HEAD":
        return Answer(200, _record(incoming, "probe", 200))
    if method == "GET":
        return Answer(200, _record(incoming, "probe", 200), json_body=_listing(path, models))
    if method != "POST":
        return Answer(204, _record(incoming, "telemetry", 204))
    body = incoming.body if isinstance(incoming.body, dict) else {}
    if path.endswith("/messages/count_tokens"):
        counted = anthropic.count_tokens(body)
        return Answer(200, _record(incoming, "count_tokens", 200), json_body=counted)
    if path.endswith("/messages"):
        request = anthropic.parse(body)
        return _generate(incoming, mount, request, anthropic.CALL_PREFIX)
    if path.endswith("/chat/completions"):
        request = openai_chat.parse(body)
        return _generate(incoming, mount, request, openai_chat.CALL_PREFIX)
    if path.endswith("/responses"):
        request = openai_responses.parse(body)
        return _generate(incoming, mount, request, openai_responses.CALL_PREFIX)
    gemini_call = _GEMINI_PATH.match(path)
    if gemini_call:
        model, action = gemini_call.groups()
        if action == "countTokens":
            counted = gemini.count_tokens(body)
            return Answer(200, _record(incoming, "count_tokens", 200), json_body=counted)
        if action in ("streamGenerateContent", "generateContent"):
            request = gemini.parse(body, model, stream=action == "streamGenerateContent")
            return _generate(incoming, mount, request, gemini.CALL_PREFIX)
    return Answer(204, _record(incoming, "telemetry", 204))


def _generate(incoming: Incoming, mount: Mount, request: ModelRequest, prefix: str) -> Answer:
    if mount.script is None:
        raise ScriptMissingError(f"no script is mounted at {incoming.mount_name or '/'}")
    decision = decide(
        mount.script,
        request,
        call_prefix=prefix,
        workdir=mount.workdir,
        text_edits=mount.text_edits,
        side_models=mount.side_models,
    )
    kind: RequestKind = decision.outcome
    wire, body, events = _encode(request, decision.reply, decision)
    record = _record(
        incoming,
        kind,
        200,
        protocol=request.protocol,
        model=request.model,
        reply_model=decision.reply.model or request.model,
        turn=decision.turn,
        usage=decision.reply.usage,
        wire_usage=wire,
        tool_names=tuple(spec.name for spec in request.tools),
    )
    if request.stream:
        return Answer(200, record, events=events, stream=True)
    return Answer(200, record, json_body=body)


def _encode(
    request: ModelRequest, reply: Reply, decision: Decision
) -> tuple[dict[str, Any], Any, list[tuple[str | None, Any]]]:
    model = reply.model or request.model
    if request.protocol == anthropic.PROTOCOL:
        wire = anthropic.wire_usage(reply.usage)
        events = list(anthropic.encode_stream(reply, model)) if request.stream else []
        return wire, anthropic.encode_json(reply, model), events
    if request.protocol == openai_responses.PROTOCOL:
        wire = openai_responses.wire_usage(reply.usage)
        events = list(openai_responses.encode_stream(reply, model)) if request.stream else []
        return wire, openai_responses.encode_json(reply, model), events
    if request.protocol == openai_chat.PROTOCOL:
        wire = openai_chat.wire_usage(reply.usage)
        chunks = openai_chat.encode_stream(reply, model, request.include_usage)
        chat_events: list[tuple[str | None, Any]] = [(None, chunk) for chunk in chunks]
        chat_events.append((None, "[DONE]"))
        return wire, openai_chat.encode_json(reply, model), chat_events if request.stream else []
    wire = gemini.wire_usage(reply.usage)
    frames: list[tuple[str | None, Any]] = [(None, f) for f in gemini.encode_stream(reply, model)]
    return wire, gemini.encode_json(reply, model), frames if request.stream else []


def _listing(path: str, models: tuple[str, ...]) -> Any:
    if _GEMINI_MODEL.match(path) and path.startswith("/v1beta"):
        wanted = path.rsplit("/", 1)[1]
        return gemini.models_list((wanted,))["models"][0]
    if path.startswith(("/v1beta/models", "/v1alpha/models")):
        return gemini.models_list(models)
    if path.endswith("/models"):
        data = [
            {
                "id": model,
                "object": "model",
                "type": "model",
                "created": 0,
                "created_at": "2025-01-01T00:00:00Z",
                "owned_by": "harnessdrive",
                "display_name": model,
            }
            for model in models
        ]
        return {
            "object": "list",
            "data": data,
            "has_more": False,
            "first_id": models[0] if models else None,
            "last_id": models[-1] if models else None,
        }
    return {}


def _record(incoming: Incoming, kind: RequestKind, status: int, **fields: Any) -> RecordedRequest:
    return RecordedRequest(
        index=-1,
        method=incoming.method,
        path=incoming.path,
        query=incoming.query,
        headers=incoming.headers,
        body=incoming.body,
        kind=kind,
        status=status,
        mount=incoming.mount_name,
        **fields,
    )


def error_record(incoming: Incoming, message: str, detail: str) -> RecordedRequest:
    return _record(incoming, "error", 500, error=message, error_detail=detail)


_REFUSAL_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    429: "rate_limit_error",
    503: "overloaded_error",
    529: "overloaded_error",
}


def refused_record(incoming: Incoming, status: int) -> RecordedRequest:
    return _record(incoming, "refused", status)


def refusal_body(status: int) -> dict[str, Any]:
    """An error body in the shape the providers use (Anthropic's, which the others tolerate)."""
    kind = _REFUSAL_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": f"scripted refusal ({status})"}}


def sse_frame(event: str | None, data: Any) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()
