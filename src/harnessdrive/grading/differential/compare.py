"""Canonical JSON and the named comparators: whether a candidate's answer is the oracle's."""

from __future__ import annotations

import json
from typing import Any

from harnessdrive.grading.differential.spec import Comparator


def canonical(value: Any) -> str:
    """One text per JSON value: sorted keys, no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _sorted_lists(value: Any) -> Any:
    if isinstance(value, list):
        return sorted((_sorted_lists(item) for item in value), key=canonical)
    if isinstance(value, dict):
        return {key: _sorted_lists(item) for key, item in value.items()}
    return value


def same(expected: Any, actual: Any, comparator: Comparator) -> bool:
    if comparator == "unordered":
        return canonical(_sorted_lists(expected)) == canonical(_sorted_lists(actual))
    return canonical(expected) == canonical(actual)
