"""Path globs for protected and restored paths.

``*`` matches within one path segment, ``**`` across segments, ``?`` one character. A pattern
without a slash matches a file name at any depth (``conftest.py``); ``dir/**`` matches everything
under ``dir``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(_regex(pattern) + r"\Z", re.DOTALL)


def _regex(pattern: str) -> str:
    pattern = pattern.strip().lstrip("/")
    if "/" not in pattern.rstrip("/"):
        pattern = "**/" + pattern
    if pattern.endswith("/"):
        pattern += "**"
    return _translate(pattern)


def _translate(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def matches(path: str, patterns: Iterable[str]) -> bool:
    return any(_compile(pattern).match(path) for pattern in patterns)


def compile_globs(patterns: Iterable[str]) -> re.Pattern[str]:
    """One expression whose ``match`` succeeds on a path exactly when one of ``patterns`` does."""
    alternatives = "|".join(f"(?:{_regex(pattern)})" for pattern in patterns)
    return re.compile(f"(?:{alternatives})\\Z" if alternatives else "(?!)", re.DOTALL)


def compile_names(patterns: Iterable[str]) -> re.Pattern[str]:
    """One expression whose ``fullmatch`` succeeds on a file name (no folder) that one of the
    slash-free ``patterns`` matches: faster than :func:`compile_globs` on whole paths."""
    alternatives = "|".join(f"(?:{_translate(pattern.strip())})" for pattern in patterns)
    return re.compile(alternatives or "(?!)", re.DOTALL)
