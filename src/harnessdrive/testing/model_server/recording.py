"""A thread-safe record of every request the server answered, with usage totals."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from harnessdrive.testing.model_server.script import Usage

RequestKind = Literal[
    "turn",  # consumed a scripted turn
    "side",  # title or other side request; no turn consumed
    "overrun",  # asked for a turn after the script ended
    "probe",  # HEAD or GET: health checks, model lists
    "count_tokens",
    "telemetry",  # any other POST, answered 204
    "error",  # answered 500
    "refused",  # answered with one of the script's refusal statuses
]

# Protocols without a cache-write tier show a scripted cache write as fresh input.
_NO_CACHE_WRITE_TIER = frozenset({"openai-chat", "gemini"})
# Only Anthropic's usage tells one-hour cache writes apart from the rest.
_CACHE_WRITE_1H_TIER = frozenset({"anthropic"})


def seen_usage(protocol: str, usage: Usage) -> Usage:
    """The usage a client of this protocol can see, in the script's tiers."""
    if protocol in _NO_CACHE_WRITE_TIER:
        return usage.model_copy(
            update={"input": usage.input + usage.cache_write, "cache_write": 0, "cache_write_1h": 0}
        )
    if protocol not in _CACHE_WRITE_1H_TIER:
        return usage.model_copy(update={"cache_write_1h": 0})
    return usage


@dataclass(frozen=True)
class RecordedRequest:
    """One request and what the server did with it."""

    index: int
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    kind: RequestKind
    status: int
    mount: str = ""
    protocol: str | None = None
    model: str | None = None
    # The model the reply named as the one that answered (the script's, or the requested one).
    reply_model: str | None = None
    turn: int | None = None
    # The scripted usage sent with the reply, and the same as the client can see it.
    usage: Usage | None = None
    wire_usage: dict[str, Any] | None = None
    error: str | None = None
    error_detail: str | None = None
    tool_names: tuple[str, ...] = field(default=())

    @property
    def seen_usage(self) -> Usage | None:
        if self.usage is None or self.protocol is None:
            return self.usage
        return seen_usage(self.protocol, self.usage)


class RequestLog:
    """Append-only list of RecordedRequest, safe to read while the server runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []

    def append(self, request: RecordedRequest) -> RecordedRequest:
        with self._lock:
            request = replace(request, index=len(self._requests))
            self._requests.append(request)
            return request

    def all(self) -> tuple[RecordedRequest, ...]:
        with self._lock:
            return tuple(self._requests)

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    def totals(self, protocol: str | None = None, mount: str | None = None) -> Usage:
        """Sum of the usage sent (as clients see it), over one protocol or all."""
        total = Usage()
        for request in self.all():
            if protocol is not None and request.protocol != protocol:
                continue
            if mount is not None and request.mount != mount:
                continue
            if request.seen_usage is not None:
                total = total + request.seen_usage
        return total
