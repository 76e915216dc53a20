"""OpenAI Chat Completions: `POST /v1/chat/completions`, streamed (`data:` chunks) or one JSON.

Usage: `prompt_tokens` = input + cache_read + cache_write (cached included, as OpenAI counts),
`prompt_tokens_details.cached_tokens` = cache_read, `completion_tokens` = output + reasoning,
`completion_tokens_details.reasoning_tokens` = reasoning. Chat Completions has no cache-write
field that clients agree on (pi reads `cache_write_tokens` the OpenRouter way, others ignore
it), so a scripted cache_write is seen by clients as fresh input.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from harnessdrive.testing.model_server.conversation import (
    ModelRequest,
    PastReply,
    Reply,
    ToolSpec,
    text_of,
)
from harnessdrive.testing.model_server.script import Usage

PROTOCOL = "openai-chat"
CALL_PREFIX = "call_"


def parse(body: dict[str, Any]) -> ModelRequest:
    tools = tuple(
        ToolSpec(str(tool["function"]["name"]), tool["function"].get("parameters") or {})
        for tool in body.get("tools") or ()
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict)
    )
    history: list[PastReply] = []
    system: list[str] = []
    texts: list[str] = []
    for message in body.get("messages") or ():
        text = text_of(message.get("content"))
        texts.append(text)
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(text)
        elif role == "assistant":
            ids = tuple(str(call.get("id", "")) for call in message.get("tool_calls") or ())
            history.append(PastReply(text, ids))
    response_format = body.get("response_format") or {}
    schema = (response_format.get("json_schema") or {}).get("schema")
    stream_options = body.get("stream_options") or {}
    return ModelRequest(
        protocol=PROTOCOL,
        model=str(body.get("model", "")),
        stream=bool(body.get("stream")),
        tools=tools,
        history=tuple(history),
        system_text="\n".join(system),
        prompt_text="\n".join(texts),
        json_schema=schema if isinstance(schema, dict) else None,
        wants_json=response_format.get("type") in ("json_object", "json_schema"),
        include_usage=bool(stream_options.get("include_usage")),
    )


def wire_usage(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.prompt_total,
        "completion_tokens": usage.completion_total,
        "total_tokens": usage.prompt_total + usage.completion_total,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning},
    }


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        }
        for call in reply.tool_calls
    ]


def _finish_reason(reply: Reply) -> str:
    return "tool_calls" if reply.stops_for_tools else "stop"


def encode_json(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
        "usage": wire_usage(reply.usage),
    }


def encode_stream(reply: Reply, model: str, include_usage: bool) -> list[dict[str, Any]]:
    """Chunks in order; the caller frames each as `data: ...` and ends with `data: [DONE]`."""
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    if reply.text:
        chunks.append(chunk({"content": reply.text}))
    for index, call in enumerate(_tool_calls(reply)):
        chunks.append(chunk({"tool_calls": [{"index": index, **call}]}))
    final = chunk({}, _finish_reason(reply))
    if include_usage:
        chunks.append(final)
        chunks.append({**base, "choices": [], "usage": wire_usage(reply.usage)})
    else:
        # Without include_usage the usage rides on the last chunk, as several providers do.
        chunks.append({**final, "usage": wire_usage(reply.usage)})
    return chunks
