"""OpenAI Responses API: `POST /v1/responses`, streamed as named SSE events or as one JSON.

Usage: `input_tokens` = input + cache_read + cache_write, `input_tokens_details.cached_tokens`
= cache_read, `input_tokens_details.cache_write_tokens` = cache_write (Codex reads it),
`output_tokens` = output + reasoning, `output_tokens_details.reasoning_tokens` = reasoning.
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

PROTOCOL = "openai-responses"
CALL_PREFIX = "call_"

_MODEL_ITEMS = {"function_call", "custom_tool_call", "reasoning", "local_shell_call"}

Event = tuple[str | None, dict[str, Any]]


def parse(body: dict[str, Any]) -> ModelRequest:
    tools: list[ToolSpec] = []
    for tool in body.get("tools") or ():
        if not isinstance(tool, dict) or "name" not in tool:
            continue
        if tool.get("type") == "custom":
            tools.append(ToolSpec(str(tool["name"]), {}, kind="custom"))
        elif tool.get("type") == "function":
            tools.append(ToolSpec(str(tool["name"]), tool.get("parameters") or {}))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    system = [text_of(body.get("instructions"))]
    texts = list(system)
    history: list[PastReply] = []
    # Consecutive items the model produced form one reply.
    current: tuple[list[str], list[str]] | None = None
    for item in items or ():
        kind = item.get("type", "message")
        from_model = kind in _MODEL_ITEMS or (kind == "message" and item.get("role") == "assistant")
        if not from_model:
            if current is not None:
                history.append(PastReply("\n".join(current[0]), tuple(current[1])))
                current = None
            text = text_of(item.get("content"))
            texts.append(text)
            if item.get("role") in ("system", "developer"):
                system.append(text)
            continue
        current = current or ([], [])
        if kind == "message":
            current[0].append(text_of(item.get("content")))
        elif "call_id" in item:
            current[1].append(str(item["call_id"]))
    if current is not None:
        history.append(PastReply("\n".join(current[0]), tuple(current[1])))
    text_format = (body.get("text") or {}).get("format") or {}
    schema = text_format.get("schema")
    return ModelRequest(
        protocol=PROTOCOL,
        model=str(body.get("model", "")),
        stream=bool(body.get("stream")),
        tools=tuple(tools),
        history=tuple(history),
        system_text="\n".join(system),
        prompt_text="\n".join(texts),
        json_schema=schema if isinstance(schema, dict) else None,
        wants_json=text_format.get("type") in ("json_schema", "json_object"),
    )


def wire_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.prompt_total,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read,
            "cache_write_tokens": usage.cache_write,
        },
        "output_tokens": usage.completion_total,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning},
        "total_tokens": usage.prompt_total + usage.completion_total,
    }


def _output(reply: Reply) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    if reply.text:
        output.append(
            {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for call in reply.tool_calls:
        if call.text_input is not None:
            output.append(
                {
                    "type": "custom_tool_call",
                    "id": f"ctc_{call.id}",
                    "status": "completed",
                    "call_id": call.id,
                    "name": call.name,
                    "input": call.text_input,
                }
            )
        else:
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{call.id}",
                    "status": "completed",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": json.dumps(call.arguments),
                }
            )
    return output


def encode_json(reply: Reply, model: str) -> dict[str, Any]:
    return {
        "id": f"resp_{uuid.uuid4().hex[:24]}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": _output(reply),
        "usage": wire_usage(reply.usage),
    }


def encode_stream(reply: Reply, model: str) -> list[Event]:
    response = encode_json(reply, model)
    events: list[Event] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **fields}))

    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    for index, item in enumerate(response["output"]):
        _emit_item(emit, index, item)
    emit("response.completed", response=response)
    return events


def _emit_item(emit: Any, index: int, item: dict[str, Any]) -> None:
    at = {"output_index": index, "item_id": item["id"]}
    if item["type"] == "message":
        text = item["content"][0]["text"]
        emit("response.output_item.added", output_index=index, item={**item, "content": []})
        part = {"type": "output_text", "text": "", "annotations": []}
        emit("response.content_part.added", **at, content_index=0, part=part)
        emit("response.output_text.delta", **at, content_index=0, delta=text)
        emit("response.output_text.done", **at, content_index=0, text=text)
        emit("response.content_part.done", **at, content_index=0, part=item["content"][0])
    elif item["type"] == "function_call":
        emit("response.output_item.added", output_index=index, item={**item, "arguments": ""})
        emit("response.function_call_arguments.delta", **at, delta=item["arguments"])
        emit("response.function_call_arguments.done", **at, arguments=item["arguments"])
    else:
        emit("response.output_item.added", output_index=index, item={**item, "input": ""})
        emit("response.custom_tool_call_input.delta", **at, delta=item["input"])
        emit("response.custom_tool_call_input.done", **at, input=item["input"])
    emit("response.output_item.done", output_index=index, item=item)
