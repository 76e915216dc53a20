"""Shell command lines with ``{placeholder}`` values filled in safely."""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Mapping

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def render(template: str, values: Mapping[str, str]) -> str:
    """Replace each known ``{name}`` with its shell-quoted value; leave other braces alone.

    Unknown names stay as they are, so shell syntax such as ``${HOME}`` or ``{a,b}`` survives.
    """

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        return shlex.quote(values[name]) if name in values else match.group(0)

    return _PLACEHOLDER.sub(substitute, template)


def placeholders(template: str) -> set[str]:
    return set(_PLACEHOLDER.findall(template))


def shell_argv(command: str) -> list[str]:
    """Run a command line the way a person would type it: bash when present, else sh."""
    shell = shutil.which("bash") or "/bin/sh"
    return [shell, "-c", command]
