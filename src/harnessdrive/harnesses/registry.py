"""Find harnesses by name: built-ins and third-party adapters share one entry-point group."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import cast

from harnessdrive.errors import UnknownHarnessError, did_you_mean
from harnessdrive.harnesses.base import Harness

ENTRY_POINT_GROUP = "harnessdrive.harnesses"

# The same table pyproject.toml registers; used as-is when the package runs uninstalled.
BUILTIN: dict[str, str] = {
    "reference": "harnessdrive.harnesses.scripted:ReferenceAgent",
    "noop": "harnessdrive.harnesses.scripted:NoopAgent",
    "breaker": "harnessdrive.harnesses.scripted:BreakerAgent",
    "tamperer": "harnessdrive.harnesses.scripted:TampererAgent",
    "crasher": "harnessdrive.harnesses.scripted:CrasherAgent",
    "sleeper": "harnessdrive.harnesses.scripted:SleeperAgent",
    "command": "harnessdrive.harnesses.command:CommandHarness",
    "claude": "harnessdrive.harnesses.claude:ClaudeCode",
    "codex": "harnessdrive.harnesses.codex:Codex",
    "gemini": "harnessdrive.harnesses.gemini:GeminiCli",
    "opencode": "harnessdrive.harnesses.opencode:OpenCode",
    "pi": "harnessdrive.harnesses.pi:Pi",
    "qwen": "harnessdrive.harnesses.qwen:QwenCode",
    "aider": "harnessdrive.harnesses.aider:Aider",
    "mini-swe-agent": "harnessdrive.harnesses.mini_swe_agent:MiniSweAgent",
    "cursor": "harnessdrive.harnesses.cursor:CursorCli",
    "goose": "harnessdrive.harnesses.goose:Goose",
}


def available() -> dict[str, str]:
    """Every harness name and the object that builds it."""
    found = dict(BUILTIN)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(entry.name, entry.value)
    return dict(sorted(found.items()))


def get_harness(name: str) -> Harness:
    """A harness by registered name, or by ``package.module:Factory`` for one not registered."""
    table = available()
    target = table.get(name) or (name if ":" in name else None)
    if target is None:
        raise UnknownHarnessError(
            f"unknown harness {name!r}{did_you_mean(name, table)}; known harnesses: "
            f"{', '.join(table)}"
        )
    module_name, _, attribute = target.partition(":")
    try:
        factory = cast(
            Callable[[], Harness], getattr(importlib.import_module(module_name), attribute)
        )
    except (ImportError, AttributeError) as exc:
        raise UnknownHarnessError(f"cannot load harness {name!r}: {exc}") from None
    return factory()
