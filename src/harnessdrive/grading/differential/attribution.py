"""Which rules a failing answer gets wrong, found by switching them off in the oracle.

A case two rules change sits in one bucket but tells about both. When a candidate's answer to
it equals the oracle's answer with the rules S switched off, the candidate behaves as if it
lacked S: the case counts against the rules of S (they "break"), and against no other bucket.
An answer no switching explains (a crash, or a mistake outside every rule) counts against the
case's own bucket, and a counterexample of it says it "involves" its rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from harnessdrive.grading.differential.compare import same
from harnessdrive.grading.differential.oracle import Oracle
from harnessdrive.grading.differential.spec import Comparator

MAX_SUBSETS = 64
"""Sets of switched-off rules tried per case (the smallest first)."""


def subsets(rules: Sequence[str]) -> list[tuple[str, ...]]:
    """The non-empty subsets of ``rules``, smallest first, at most :data:`MAX_SUBSETS`."""
    found: list[tuple[str, ...]] = []
    for size in range(1, len(rules) + 1):
        for combo in combinations(sorted(rules), size):
            if len(found) == MAX_SUBSETS:
                return found
            found.append(combo)
    return found


def explain(
    oracle: Oracle,
    case: Any,
    rules: Sequence[str],
    actual: Any,
    comparator: Comparator,
) -> tuple[str, ...] | None:
    """The smallest set of ``rules`` whose switching-off makes the oracle answer ``actual``
    (None: no such set)."""
    for combo in subsets(rules):
        if same(oracle.answer(case, combo), actual, comparator):
            return combo
    return None


def explain_all(
    oracle: Oracle,
    failing: Sequence[tuple[Any, Sequence[str], Any]],
    comparator: Comparator,
) -> list[tuple[str, ...] | None]:
    """:func:`explain` for each ``(case, rules, actual)``; the oracle is asked in batches."""
    oracle.prefetch([(case, combo) for case, rules, _ in failing for combo in subsets(rules)])
    return [explain(oracle, case, rules, actual, comparator) for case, rules, actual in failing]
