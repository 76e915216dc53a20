"""The oracle as the grader calls it: on the host, with rules switched off, answers cached."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harnessdrive.errors import GradingError
from harnessdrive.grading.differential.compare import canonical
from harnessdrive.grading.differential.loading import task_callable
from harnessdrive.grading.differential.spec import OracleSpec
from harnessdrive.grading.differential.task_commands import (
    TaskCommandError,
    run_json_command,
    switched,
)


@dataclass
class Oracle:
    """Answers cases; each distinct (case, rules off) is asked once."""

    folder: Path
    spec: OracleSpec
    calls: int = 0
    """How many times the oracle itself ran (cache misses)."""
    cache_bytes: int | None = None
    """Bytes of JSON (cases and answers) the cache may hold, the oldest dropped first; None:
    unbounded (grading asks about the task's own cases only)."""
    _cache: dict[tuple[str, frozenset[str]], Any] = field(default_factory=dict)
    _sizes: dict[tuple[str, frozenset[str]], int] = field(default_factory=dict)
    _cached: int = 0

    def answer(self, case: Any, off: Iterable[str] = ()) -> Any:
        key = (canonical(case), frozenset(off))
        if key not in self._cache:
            self.calls += 1
            answer = self._ask(case, key[1])
            self._cache[key] = answer
            if self.cache_bytes is not None:
                self._bound(key, len(key[0]) + len(canonical(answer)))
            return answer
        return self._cache[key]

    def _bound(self, key: tuple[str, frozenset[str]], size: int) -> None:
        self._sizes[key] = size
        self._cached += size
        while self.cache_bytes is not None and self._cached > self.cache_bytes and self._sizes:
            oldest = next(iter(self._sizes))
            self._cached -= self._sizes.pop(oldest)
            del self._cache[oldest]

    def _ask(self, case: Any, off: frozenset[str]) -> Any:
        if self.spec.command is not None:
            words, env = switched(self.spec.command, [self.spec.switches[r] for r in sorted(off)])
            try:
                return run_json_command(
                    self.folder, words, case=case, env=env, timeout=self.spec.answer_timeout
                )
            except TaskCommandError as exc:
                raise GradingError(f"the oracle failed on a case: {exc}") from None
        assert self.spec.function is not None
        function = task_callable(self.folder, self.spec.function, "oracle")
        try:
            answer = function(case, off)
            canonical(answer)  # an answer must be JSON
        except Exception as exc:  # the oracle's own failure: the grader cannot evaluate
            raise GradingError(f"the oracle failed on a case: {type(exc).__name__}") from exc
        return answer

    def rules_of(self, case: Any) -> tuple[str, ...]:
        """The rules whose switching-off changes the answer to ``case``."""
        base = canonical(self.answer(case))
        return tuple(r for r in self.spec.rules if canonical(self.answer(case, {r})) != base)

    def isolates(self, case: Any, rules: tuple[str, ...]) -> bool:
        """Whether ``case`` (tagged with ``rules``) measures one rule alone, or none.

        A case tagged with rule R alone is isolated when the other rules make no difference to
        it, with R on or off: the answer with every other rule off is the full answer, and the
        answer with every rule off is the answer with R off. An untagged case is isolated when
        even every rule off at once leaves its answer alone. A candidate that gets R wrong then
        fails every isolated case of R, whatever it does with the other rules, and one that
        implements no rule passes every isolated untagged case.
        """
        every = frozenset(self.spec.rules)
        full = canonical(self.answer(case))
        if not rules:
            return canonical(self.answer(case, every)) == full
        if len(rules) > 1:
            return False
        (rule,) = rules
        return canonical(self.answer(case, every - {rule})) == full and canonical(
            self.answer(case, every)
        ) == canonical(self.answer(case, {rule}))
