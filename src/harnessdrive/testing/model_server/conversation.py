"""Protocol-neutral view of one model request and of the reply the server sends back.

Each protocol module parses its JSON body into a `ModelRequest` and encodes a `Reply` into its
own wire shape; everything between (which turn, which tools, which words) works on these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from harnessdrive.testing.model_server.script import Usage

# Tool call ids we hand out carry the turn they belong to, so a later request shows which
# scripted turns its conversation already holds: "...hd<turn>_<call>...".
_CALL_ID_MARK = re.compile(r"hd(\d+)_(\d+)")


def call_id(prefix: str, turn: int, index: int) -> str:
    return f"{prefix}hd{turn}_{index}"


def turn_of_call_id(value: str) -> int | None:
    match = _CALL_ID_MARK.search(value)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class ToolSpec:
    """A tool the client offers: its name, JSON schema and how it is called."""

    name: str
    parameters: dict[str, Any]
    # "function": JSON arguments; "custom": one free-form text input (Responses API).
    kind: Literal["function", "custom"] = "function"

    @property
    def properties(self) -> dict[str, Any]:
        props = self.parameters.get("properties")
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> tuple[str, ...]:
        required = self.parameters.get("required")
        if not isinstance(required, list):
            return ()
        return tuple(name for name in required if isinstance(name, str))


@dataclass(frozen=True)
class PastReply:
    """One model reply already in the conversation: its text and the call ids it made."""

    text: str
    call_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelRequest:
    """What the server needs to know about one generation request."""

    protocol: str
    model: str
    stream: bool
    tools: tuple[ToolSpec, ...]
    history: tuple[PastReply, ...]
    system_text: str
    # All prompt text, searched for the working directory the client reveals.
    prompt_text: str
    # A JSON schema the answer must follow (structured-output side requests), if any.
    json_schema: dict[str, Any] | None = None
    wants_json: bool = False
    include_usage: bool = True

    def tool(self, name: str) -> ToolSpec | None:
        for spec in self.tools:
            if spec.name == name:
                return spec
        return None


@dataclass(frozen=True)
class ToolCall:
    """A tool call in the client's own vocabulary, ready to encode."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    # Set for custom (free-form) tools instead of `arguments`.
    text_input: str | None = None


@dataclass(frozen=True)
class Reply:
    """What the model says back: text, tool calls, usage, and why it stopped."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    usage: Usage
    # The model id the reply names; None: the one the request asked for.
    model: str | None = None

    @property
    def stops_for_tools(self) -> bool:
        return bool(self.tool_calls)


def text_of(content: Any) -> str:
    """Concatenate the text found in a message content of any of the supported shapes."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(filter(None, (text_of(part) for part in content)))
    if isinstance(content, dict):
        for key in ("text", "content", "input_text", "output_text"):
            if key in content and not isinstance(content[key], dict):
                return text_of(content[key])
    return ""
