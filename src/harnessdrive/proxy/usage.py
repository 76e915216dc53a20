"""Tokens of one model call, read from the provider's answer as it passes through the proxy.

Each wire protocol reports usage in its own fields, in a plain JSON body or in the events of a
server-sent stream; both come out in the transcript's disjoint tiers (``input`` excludes cache
reads and writes, ``output`` includes reasoning), the tiers the CLI adapters normalise their
logs to, so the two counts can be compared call for call. The reader is fed the body in pieces
as they are forwarded and keeps only the event it is reading, never the whole stream.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from harnessdrive.transcript.models import Usage

Wire = Literal["anthropic", "openai-chat", "openai-responses", "gemini"]

MAX_EVENT_BYTES = 8 * 1024 * 1024
"""An SSE event or a JSON body larger than this is not parsed (its usage stays unknown)."""
_MOST_TOKENS = 10**12


def wire_of(path: str) -> Wire | None:
    """The wire protocol of a generation request, from its path; None for anything else
    (model lists, token counting, telemetry)."""
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith((":generateContent", ":streamGenerateContent")):
        return "gemini"
    return None


class UsageReader:
    """Reads one answer's model and usage from its body, fed piece by piece."""

    def __init__(self, wire: Wire, streamed: bool) -> None:
        self.wire = wire
        self.streamed = streamed
        self.model: str | None = None
        self.usage: Usage | None = None
        self._pending = bytearray()
        self._event = bytearray()
        self._overflow = False
        self._anthropic_start: dict[str, Any] = {}

    def feed(self, data: bytes) -> None:
        if not self.streamed:
            if len(self._pending) + len(data) > MAX_EVENT_BYTES:
                self._overflow = True
                self._pending.clear()
            elif not self._overflow:
                self._pending += data
            return
        self._pending += data
        while True:
            end = self._pending.find(b"\n")
            if end < 0:
                if len(self._pending) > MAX_EVENT_BYTES:
                    self._pending.clear()
                    self._overflow = True
                return
            line = bytes(self._pending[:end]).rstrip(b"\r")
            del self._pending[: end + 1]
            self._line(line)

    def finish(self) -> None:
        if self.streamed:
            if self._pending:
                self._line(bytes(self._pending))
            self._line(b"")
        elif not self._overflow and self._pending:
            self._take(_loads(bytes(self._pending)))
        self._pending.clear()

    def _line(self, line: bytes) -> None:
        if not line:  # an empty line ends an event
            if self._event and not self._overflow:
                self._take(_loads(bytes(self._event)))
            self._event.clear()
            self._overflow = False
            return
        if line.startswith(b"data:"):
            payload = line[5:].lstrip(b" ")
            if len(self._event) + len(payload) > MAX_EVENT_BYTES:
                self._overflow = True
                self._event.clear()
            elif not self._overflow:
                if self._event:
                    self._event += b"\n"
                self._event += payload

    def _take(self, body: Any) -> None:
        if not isinstance(body, dict):
            return
        if self.wire == "anthropic":
            self._anthropic(body)
        elif self.wire == "openai-chat":
            self._found(body.get("model"), _chat_usage(body.get("usage")))
        elif self.wire == "openai-responses":
            response = body.get("response")
            inner: dict[str, Any] = response if isinstance(response, dict) else body
            self._found(inner.get("model"), _responses_usage(inner.get("usage")))
        else:
            self._found(body.get("modelVersion"), _gemini_usage(body.get("usageMetadata")))

    def _anthropic(self, body: Any) -> None:
        kind = body.get("type")
        if kind == "message_start" and isinstance(body.get("message"), dict):
            message = body["message"]
            start = message.get("usage") if isinstance(message.get("usage"), dict) else {}
            self._anthropic_start = start
            self._found(message.get("model"), _anthropic_usage(start))
        elif kind == "message_delta" and isinstance(body.get("usage"), dict):
            # The delta's counts are cumulative; fields it leaves out keep message_start's.
            self._found(None, _anthropic_usage({**self._anthropic_start, **body["usage"]}))
        elif kind == "message":
            self._found(body.get("model"), _anthropic_usage(body.get("usage")))

    def _found(self, model: Any, usage: Usage | None) -> None:
        if isinstance(model, str) and model:
            self.model = model[:200]
        if usage is not None:
            self.usage = usage


def _loads(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if value != value:  # NaN
        return 0
    return int(min(max(value, 0), _MOST_TOKENS))


def _part(raw: Any, key: str) -> dict[str, Any]:
    value = raw.get(key) if isinstance(raw, dict) else None
    return value if isinstance(value, dict) else {}


def _anthropic_usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(
        input=_count(raw.get("input_tokens")),
        cache_read=_count(raw.get("cache_read_input_tokens")),
        cache_write=_count(raw.get("cache_creation_input_tokens")),
        cache_write_1h=_count(_part(raw, "cache_creation").get("ephemeral_1h_input_tokens")),
        output=_count(raw.get("output_tokens")),
        reasoning=_count(_part(raw, "output_tokens_details").get("thinking_tokens")),
    )


def _openai(prompt: int, cached: int, written: int, completion: int, reasoning: int) -> Usage:
    """OpenAI-style counts: the prompt includes cache reads and writes, the completion reasoning."""
    return Usage(
        input=max(prompt - cached - written, 0),
        cache_read=cached,
        cache_write=written,
        output=completion,
        reasoning=reasoning,
    )


def _chat_usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return _openai(
        _count(raw.get("prompt_tokens")),
        _count(_part(raw, "prompt_tokens_details").get("cached_tokens")),
        0,
        _count(raw.get("completion_tokens")),
        _count(_part(raw, "completion_tokens_details").get("reasoning_tokens")),
    )


def _responses_usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    details = _part(raw, "input_tokens_details")
    return _openai(
        _count(raw.get("input_tokens")),
        _count(details.get("cached_tokens")),
        _count(details.get("cache_write_tokens")),
        _count(raw.get("output_tokens")),
        _count(_part(raw, "output_tokens_details").get("reasoning_tokens")),
    )


def _gemini_usage(raw: Any) -> Usage | None:
    """Gemini's prompt count includes cached tokens; its candidates count leaves out thoughts."""
    if not isinstance(raw, dict):
        return None
    prompt = _count(raw.get("promptTokenCount")) + _count(raw.get("toolUsePromptTokenCount"))
    cached = _count(raw.get("cachedContentTokenCount"))
    thoughts = _count(raw.get("thoughtsTokenCount"))
    return Usage(
        input=max(prompt - cached, 0),
        cache_read=cached,
        output=_count(raw.get("candidatesTokenCount")) + thoughts,
        reasoning=thoughts,
    )
