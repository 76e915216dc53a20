"""Each CLI's flags in one table, and the check of those flags against the installed CLI.

CLIs rename and drop flags between releases (Codex removed ``--full-auto``). An adapter names
every flag it passes through its table, and before a run the flags it is about to pass are looked
up in the installed CLI's ``--help``: a missing one means the installed version does not fit this
adapter, which is reported with the flag and the version instead of a confusing failure later.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Flag:
    """One command-line flag as the CLI spells it."""

    text: str
    listed: bool = True
    """False for flags the CLI accepts but leaves out of ``--help`` (they cannot be checked)."""


class FlagTable:
    """A CLI's flags by purpose: ``FLAGS["model"]`` is the text to pass."""

    def __init__(self, flags: Mapping[str, str | Flag]) -> None:
        self._flags = {
            purpose: flag if isinstance(flag, Flag) else Flag(flag)
            for purpose, flag in flags.items()
        }

    def __getitem__(self, purpose: str) -> str:
        return self._flags[purpose].text

    def __contains__(self, purpose: object) -> bool:
        return purpose in self._flags

    def purposes(self) -> tuple[str, ...]:
        return tuple(self._flags)

    def checkable(self, argv: Sequence[str]) -> list[str]:
        """The listed flags of this table that appear in ``argv``, in order."""
        listed = {flag.text for flag in self._flags.values() if flag.listed}
        seen: list[str] = []
        for word in argv:
            name = word.split("=", 1)[0] if word.startswith("--") else word
            if name in listed and name not in seen:
                seen.append(name)
        return seen


def missing_flags(help_text: str, flags: Iterable[str]) -> list[str]:
    """The flags that ``help_text`` does not mention as a whole word."""
    return [flag for flag in flags if not mentions(help_text, flag)]


def mentions(help_text: str, flag: str) -> bool:
    # A flag must stand alone: "--model" must not match "--model-class" or "--models".
    pattern = rf"(?<![\w-]){re.escape(flag)}(?![\w-])"
    return re.search(pattern, help_text) is not None
