"""Gemini API: `POST /v1beta/models/<m>:streamGenerateContent?alt=sse` and `:generateContent`.

Usage: `promptTokenCount` = input + cache_read + cache_write (cached included),
`cachedContentTokenCount` = cache_read, `candidatesTokenCount` = output (reasoning excluded),
`thoughtsTokenCount` = reasoning. Gemini has no cache-write tier, so a scripted cache_write is
seen by clients as fresh input.
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

PROTOCOL = "gemini"
CALL_PREFIX = "call_"


def parse(body: dict[str, Any], model: str, stream: bool) -> ModelRequest:
    declarations = [
        declaration
        for tool in body.get("tools") or ()
        if isinstance(tool, dict)
        for declaration in tool.get("functionDeclarations") or ()
        if isinstance(declaration, dict) and "name" in declaration
    ]
    tools = tuple(
        ToolSpec(
            str(declaration["name"]),
            declaration.get("parametersJsonSchema") or declaration.get("parameters") or {},
        )
        for declaration in declarations
    )
    system = _parts_text((body.get("systemInstruction") or {}).get("parts"))
    texts = [system]
    history: list[PastReply] = []
    for content in body.get("contents") or ():
        parts = content.get("parts") or []
        text = _parts_text(parts)
        texts.append(text)
        if content.get("role") == "model":
            ids = tuple(
                str(part["functionCall"].get("id", ""))
                for part in parts
                if isinstance(part.get("functionCall"), dict)
            )
            history.append(PastReply(text, ids))
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    return ModelRequest(
        protocol=PROTOCOL,
        model=model,
        stream=stream,
        tools=tools,
        history=tuple(history),
        system_text=system,
        prompt_text="\n".join(texts),
        json_schema=schema if isinstance(schema, dict) else None,
        wants_json=config.get("responseMimeType") == "application/json",
    )


def _parts_text(parts: Any) -> str:
    if not isinstance(parts, list):
        return text_of(parts)
    return "\n".join(
        str(part["text"])
        for part in parts
        if isinstance(part, dict) and "text" in part and not part.get("thought")
    )


def wire_usage(usage: Usage) -> dict[str, Any]:
    return {
        "promptTokenCount": usage.prompt_total,
        "cachedContentTokenCount": usage.cache_read,
        "candidatesTokenCount": usage.output,
        "thoughtsTokenCount": usage.reasoning,
        "totalTokenCount": usage.prompt_total + usage.completion_total,
    }


def _parts(reply: Reply) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append({"text": reply.text})
    for call in reply.tool_calls:
        parts.append({"functionCall": {"id": call.id, "name": call.name, "args": call.arguments}})
    return parts


def _frame(parts: list[dict[str, Any]], model: str, response_id: str) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
        "modelVersion": model,
        "responseId": response_id,
    }


def encode_json(reply: Reply, model: str) -> dict[str, Any]:
    response = _frame(_parts(reply), model, uuid.uuid4().hex[:16])
    response["candidates"][0]["finishReason"] = "STOP"
    response["usageMetadata"] = wire_usage(reply.usage)
    return response


def encode_stream(reply: Reply, model: str) -> list[dict[str, Any]]:
    """One frame per part; the last carries the finish reason and the usage."""
    response_id = uuid.uuid4().hex[:16]
    frames = [_frame([part], model, response_id) for part in _parts(reply)]
    if not frames:
        frames = [_frame([{"text": ""}], model, response_id)]
    frames[-1]["candidates"][0]["finishReason"] = "STOP"
    frames[-1]["usageMetadata"] = wire_usage(reply.usage)
    return frames


def count_tokens(body: dict[str, Any]) -> dict[str, Any]:
    return {"totalTokens": max(1, len(json.dumps(body.get("contents", []))) // 4)}


def models_list(models: tuple[str, ...]) -> dict[str, Any]:
    return {
        "models": [
            {
                "name": f"models/{model}",
                "displayName": model,
                "inputTokenLimit": 1_000_000,
                "outputTokenLimit": 65_536,
                "supportedGenerationMethods": ["generateContent", "countTokens"],
            }
            for model in models
        ]
    }
