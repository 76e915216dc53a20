"""Errors that will repeat on every task, and how to fix them.

When a harness fails this way the run records the trial ``could_not_run`` with the hint and skips
that harness's remaining trials, instead of failing every task the same way.
"""

from __future__ import annotations

import re
from typing import Literal

FatalKind = Literal["login", "version", "missing"]

_RULES: tuple[tuple[FatalKind, re.Pattern[str], str], ...] = (
    (
        "login",
        re.compile(
            r"authenticat|oauth|not logged in|please (sign|log) ?in|invalid (api|x-api)[ -]key"
            r"|unauthori[sz]ed|missing api key|api key not (found|set)|no api key",
            re.IGNORECASE,
        ),
        "sign in: run `{binary}` once, or set its API key",
    ),
    (
        "version",
        re.compile(
            r"newer version|please upgrade|update required|upgrade required|version .* too old"
            r"|unsupported version|unknown (option|flag|argument)|unexpected argument",
            re.IGNORECASE,
        ),
        "upgrade `{binary}` (this adapter was written for a newer version)",
    ),
    (
        "missing",
        re.compile(r"no such file or directory|command not found|not found in path", re.IGNORECASE),
        "install `{binary}`, or put it on PATH",
    ),
)


def fatal_hint(error_text: str, binary: str) -> str | None:
    """The fix for an error that will repeat on every task, or None for a one-off error."""
    for _kind, pattern, hint in _RULES:
        if pattern.search(error_text):
            return hint.format(binary=binary)
    return None


def fatal_kind(error_text: str) -> FatalKind | None:
    """Which kind of repeating error this is, if any: not signed in, too old, not installed."""
    for kind, pattern, _hint in _RULES:
        if pattern.search(error_text):
            return kind
    return None


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
