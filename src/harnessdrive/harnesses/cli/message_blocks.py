"""Events from Anthropic-shaped messages: text, tool_use and tool_result content blocks.

Claude Code writes them in its stream and its transcript, and Qwen Code and Cursor CLI copy the
shape; only the tool names differ, so each adapter passes its own :class:`ToolKinds`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from harnessdrive.harnesses.cli.recording import TranscriptBuilder, mapping

_EXIT_CODE = re.compile(r"exit(?:ed with)?[ _]code:?\s*(-?\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class ToolKinds:
    """Which of a CLI's tools write files and which run shell commands."""

    file_tools: frozenset[str]
    shell_tools: frozenset[str]
    path_keys: tuple[str, ...] = ("file_path", "path", "filePath", "notebook_path")
    command_keys: tuple[str, ...] = ("command", "cmd")


@dataclass
class BlockReader:
    """Turns message content blocks into events, pairing each tool result with its call."""

    builder: TranscriptBuilder
    kinds: ToolKinds
    _calls: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)

    def assistant(self, message: dict[str, Any]) -> None:
        for block in _blocks(message):
            kind = block.get("type")
            if kind == "text":
                self.builder.message(str(block.get("text", "")))
            elif kind == "tool_use":
                name = str(block.get("name", ""))
                arguments = mapping(block.get("input"))
                call_id = str(block.get("id", ""))
                self._calls[call_id] = (name, arguments)
                self.builder.tool_call(name, arguments, call_id)

    def user(self, message: dict[str, Any]) -> None:
        for block in _blocks(message):
            if block.get("type") != "tool_result":
                continue
            call_id = str(block.get("tool_use_id", ""))
            output = _text(block.get("content"))
            is_error = bool(block.get("is_error"))
            name, arguments = self._calls.get(call_id, ("", {}))
            self.builder.tool_result(call_id, output, is_error=is_error, name=name)
            self._effects(name, arguments, output, is_error)

    def _effects(self, name: str, arguments: dict[str, Any], output: str, is_error: bool) -> None:
        if name in self.kinds.shell_tools:
            command = _first(arguments, self.kinds.command_keys)
            if command:
                self.builder.command(command, exit_code(output, is_error), output)
        elif name in self.kinds.file_tools and not is_error:
            path = _first(arguments, self.kinds.path_keys)
            if path:
                self.builder.file_change(path, name)


def exit_code(output: str, is_error: bool) -> int | None:
    """A shell tool's exit code from its result text; 0 for a plain success."""
    match = _EXIT_CODE.search(output)
    if match:
        return int(match.group(1))
    return None if is_error else 0


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(b.get("text", "")) for b in content if isinstance(b, dict)]
        return "\n".join(part for part in parts if part)
    return "" if content is None else str(content)


def _first(arguments: dict[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return value
    return ""
