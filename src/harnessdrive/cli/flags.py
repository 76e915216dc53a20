"""The command line's flag for each library setting, added to the messages the library writes."""

from __future__ import annotations

from collections.abc import Sequence

from harnessdrive.errors import Setting, UserError

FLAGS: dict[str, str] = {
    "allow_unpriced": "--allow-unpriced",
    "harnesses": "--harness",
    "jobs": "--jobs",
    "known_failures": "--known-failures",
    "margin": "--margin",
    "max_tasks": "--max",
    "max_usd": "--max-usd",
    "models": "--model",
    "price_files": "--prices",
    "rebuild_index": "harnessdrive index --rebuild",
    "repeat": "--repeat",
    "results": "--results",
    "sample_every": "--sample-every",
    "sandbox": "--sandbox",
    "setup_command": "--setup-cmd",
    "show": "--show",
    "since": "--since",
    "test_command": "--test-cmd",
    "test_timeout": "--test-timeout",
    "validate": "--validate",
}


def flag(setting: Setting) -> str:
    """``Setting("max_usd", "USD")`` -> ``--max-usd USD``."""
    return f"{FLAGS[setting.name]} {setting.value}".rstrip()


def with_flags(message: str, settings: Sequence[Setting]) -> str:
    """The message with the flags that fix it after its first line: ``... (--max-usd USD)``."""
    if not settings:
        return message
    first, newline, rest = message.partition("\n")
    flags = ", ".join(dict.fromkeys(flag(setting) for setting in settings))
    return f"{first} ({flags}){newline}{rest}"


def error_message(error: UserError) -> str:
    return with_flags(str(error), error.settings)
