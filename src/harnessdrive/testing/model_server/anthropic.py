"""Anthropic Messages API: `POST /v1/messages`, streamed as named SSE events or as one JSON.

Usage: `input_tokens` = fresh input (cache excluded), `cache_read_input_tokens`,
`cache_creation_input_tokens`, `output_tokens` = output + reasoning, and
`output_tokens_details.thinking_tokens` = reasoning.
"""

from __future__ import annotations

import json
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

PROTOCOL = "anthropic"
CALL_PREFIX = "toolu_"

Event = tuple[str | None, dict[str, Any]]


def parse(body: dict[str, Any]) -> ModelRequest:
    tools = tuple(
        ToolSpec(str(tool["name"]), tool.get("input_schema") or {})
        for tool in body.get("tools") or ()
        if isinstance(tool, dict) and "name" in tool
    )
    history: list[PastReply] = []
    texts = [text_of(body.get("system"))]
    for message in body.get("messages") or ():
        content = message.get("content")
        texts.append(text_of(content))
        if message.get("role") != "assistant":
            continue
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        ids = tuple(str(block.get("id", "")) for block in blocks if block.get("type") == "tool_use")
        text = "\n".join(
            text_of(block.get("text")) for block in blocks if block.get("type") == "text"
        )
        history.append(PastReply(text, ids))
    schema = _output_schema(body)
    return ModelRequest(
        protocol=PROTOCOL,
        model=str(body.get("model", "")),
        stream=bool(body.get("stream")),
        tools=tools,
        history=tuple(history),
        system_text=texts[0],
        prompt_text="\n".join(texts),
        json_schema=schema,
    )


def _output_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    for holder in (body.get("output_format"), (body.get("output_config") or {}).get("format")):
        schema = holder.get("schema") if isinstance(holder, dict) else None
        if isinstance(schema, dict):
            return schema
    return None


def wire_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input,
        "cache_creation_input_tokens": usage.cache_write,
        "cache_creation": {
            "ephemeral_5m_input_tokens": usage.cache_write - usage.cache_write_1h,
            "ephemeral_1h_input_tokens": usage.cache_write_1h,
        },
        "cache_read_input_tokens": usage.cache_read,
        "output_tokens": usage.completion_total,
        "output_tokens_details": {"thinking_tokens": usage.reasoning},
    }


def _content(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        )
    return blocks


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if reply.stops_for_tools else "end_turn"


def encode_json(reply: Reply, model: str) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _content(reply),
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": wire_usage(reply.usage),
    }


def encode_stream(reply: Reply, model: str) -> list[Event]:
    message = encode_json(reply, model)
    start_usage = {**wire_usage(reply.usage), "output_tokens": 0}
    del start_usage["output_tokens_details"]
    events: list[Event] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {**message, "content": [], "stop_reason": None, "usage": start_usage},
            },
        )
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opening},
            )
        )
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
                "usage": wire_usage(reply.usage),
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def count_tokens(body: dict[str, Any]) -> dict[str, Any]:
    # Roughly four characters a token; nothing asserts on this estimate.
    return {"input_tokens": max(1, len(json.dumps(body.get("messages", []))) // 4)}
