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


def shrink(
    case: Any, parts: Sequence[str], disagrees: Disagrees, *, max_tries: int | None = None
) -> Shrunk:
    """A smaller case on which the candidate still disagrees: no single item of any part, and
    no single line of a part's text (a string part, or a string item of a list part), can be
    deleted without the disagreement going away (1-minimal), unless ``max_tries`` tries (each
    at most one oracle answer) run out first."""
    before = size(case, parts)
    current = copy.deepcopy(case)
    budget = _Budget(disagrees, max_tries)
    if not isinstance(current, dict):
        return Shrunk(current, 0, before, before)
    changed = True
    while changed and not budget.spent:
        changed = False
        for part in parts:
            value = current.get(part)
            if isinstance(value, list) and value:
                reduced = _ddmin(value, _replacing(current, part), budget)
                if len(reduced) < len(value):
                    current = {**current, part: reduced}
                    changed = True
            changed |= (shrunk := _shrink_lines(current, part, budget)) != current
            current = shrunk
    return Shrunk(current, budget.tries, before, size(current, parts))


def _replacing(case: dict[str, Any], part: str) -> Callable[[list[Any]], Any]:
    def build(items: list[Any]) -> Any:
        return {**case, part: items}

    return build


def _shrink_lines(case: dict[str, Any], part: str, budget: _Budget) -> dict[str, Any]:
    """``case`` with the lines of ``part``'s text (or of each text item of it) reduced."""
    value = case.get(part)
    if isinstance(value, str) and "\n" in value.strip("\n"):
        lines = value.split("\n")
        kept = _ddmin(lines, lambda c: {**case, part: "\n".join(c)}, budget)
        return {**case, part: "\n".join(kept)}
    if not isinstance(value, list):
        return case
    current = case
    for k in range(len(value)):
        items = current[part]
        item = items[k] if k < len(items) else None
        if not isinstance(item, str) or "\n" not in item.strip("\n"):
            continue
        base = current

        def build(lines: list[Any], b: dict[str, Any] = base, i: int = k) -> dict[str, Any]:
            return {**b, part: [*b[part][:i], "\n".join(lines), *b[part][i + 1 :]]}

        kept = _ddmin(item.split("\n"), build, budget)
        current = build(kept)
    return current


class _Budget:
    """Counts tries; once ``limit`` are spent every further try says "no longer disagrees"."""

    def __init__(self, disagrees: Disagrees, limit: int | None) -> None:
        self.disagrees, self.limit, self.tries = disagrees, limit, 0

    @property
    def spent(self) -> bool:
        return self.limit is not None and self.tries >= self.limit

    def __call__(self, cases: Sequence[Any]) -> list[bool]:
        if self.limit is not None:
            allowed = max(0, self.limit - self.tries)
            cases = list(cases)[:allowed]
        self.tries += len(cases)
        verdicts = self.disagrees(cases) if cases else []
        return [*verdicts, *([False] * (len(cases) - len(verdicts)))]


def _ddmin(items: list[Any], build: Callable[[list[Any]], Any], disagrees: _Budget) -> list[Any]:
    items = list(items)
    chunks = 2
    while len(items) >= 1 and not disagrees.spent:
        chunk = max(1, len(items) // chunks)
        pieces = [items[i : i + chunk] for i in range(0, len(items), chunk)]
        complements = [
            [item for j, piece in enumerate(pieces) if j != k for item in piece]
            for k in range(len(pieces))
        ]
        candidates = _distinct([*pieces, *complements] if len(pieces) > 2 else complements)
        verdicts = disagrees([build(c) for c in candidates])
        verdicts += [False] * (len(candidates) - len(verdicts))
        kept = next((c for c, bad in zip(candidates, verdicts, strict=True) if bad), None)
        if kept is not None and len(kept) < len(items):
            items = kept
            chunks = 2 if kept in pieces else max(chunks - 1, 2)
            continue
        if chunk == 1:
            break
        chunks = min(len(items), chunks * 2)
    return items


def _distinct(lists: list[list[Any]]) -> list[list[Any]]:
    seen: set[str] = set()
    out = []
    for items in lists:
        key = canonical(items)
        if key not in seen:
            seen.add(key)
            out.append(items)
    return out
