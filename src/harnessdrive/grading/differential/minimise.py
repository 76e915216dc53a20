"""Shrinking a failing case: delta debugging over the list items of its declared parts, kept
while the candidate still disagrees with the oracle.

Each try costs a candidate run and an oracle answer; the oracle's answers are cached (the same
reduced case is never asked twice) and the candidate answers a whole round of tries in one
worker run, so a counterexample costs a few worker starts, not one per try.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harnessdrive.grading.differential.compare import canonical

Disagrees = Callable[[Sequence[Any]], list[bool]]
"""Given reduced cases, whether the candidate still disagrees with the oracle on each."""


@dataclass(frozen=True)
class Shrunk:
    case: Any
    tries: int
    size_before: int
    size_after: int


def size(case: Any, parts: Sequence[str]) -> int:
    """Items in the declared parts (what the minimiser may delete)."""
    return sum(len(case.get(part) or ()) for part in parts if isinstance(case, dict))


def shrink(case: Any, parts: Sequence[str], disagrees: Disagrees) -> Shrunk:
    """A smaller case on which the candidate still disagrees: no single item of any part can be
    deleted without the disagreement going away (1-minimal)."""
    before = size(case, parts)
    current = copy.deepcopy(case)
    tries = 0
    if not isinstance(current, dict):
        return Shrunk(current, 0, before, before)
    changed = True
    while changed:
        changed = False
        for part in parts:
            items = current.get(part)
            if not isinstance(items, list) or not items:
                continue
            reduced, used = _ddmin_part(current, part, disagrees)
            tries += used
            if len(reduced) < len(items):
                current = {**current, part: reduced}
                changed = True
    return Shrunk(current, tries, before, size(current, parts))


def _ddmin_part(case: dict[str, Any], part: str, disagrees: Disagrees) -> tuple[list[Any], int]:
    items: list[Any] = list(case[part])
    chunks = 2
    tries = 0
    while len(items) >= 1:
        chunk = max(1, len(items) // chunks)
        pieces = [items[i : i + chunk] for i in range(0, len(items), chunk)]
        complements = [
            [item for j, piece in enumerate(pieces) if j != k for item in piece]
            for k in range(len(pieces))
        ]
        candidates = _distinct([*pieces, *complements] if len(pieces) > 2 else complements)
        verdicts = disagrees([{**case, part: c} for c in candidates])
        tries += len(candidates)
        kept = next((c for c, bad in zip(candidates, verdicts, strict=True) if bad), None)
        if kept is not None and len(kept) < len(items):
            items = kept
            chunks = 2 if kept in pieces else max(chunks - 1, 2)
            continue
        if chunk == 1:
            break
        chunks = min(len(items), chunks * 2)
    return items, tries


def _distinct(lists: list[list[Any]]) -> list[list[Any]]:
    seen: set[str] = set()
    out = []
    for items in lists:
        key = canonical(items)
        if key not in seen:
            seen.add(key)
            out.append(items)
    return out
