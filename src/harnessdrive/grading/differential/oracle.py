"""The oracle as the grader calls it: on the host, with rules switched off, answers cached."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harnessdrive.errors import GradingError
from harnessdrive.grading.differential.compare import canonical
from harnessdrive.grading.differential.line_process import LineProcess
from harnessdrive.grading.differential.loading import task_callable
from harnessdrive.grading.differential.spec import OracleSpec
from harnessdrive.grading.differential.task_commands import (
    TaskCommandError,
    TaskCommandTimeout,
    run_json_command,
    switched_off,
)

Key = tuple[str, frozenset[str]]
BATCH = 256
"""Requests sent to a ``lines`` oracle at once."""


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
    record: Callable[[Key, Any], None] | None = None
    """Called with each new answer as it comes (a case build's journal)."""
    _cache: dict[Key, Any] = field(default_factory=dict)
    _sizes: dict[Key, int] = field(default_factory=dict)
    _cached: int = 0
    _lines: LineProcess | None = None

    def answer(self, case: Any, off: Iterable[str] = ()) -> Any:
        key = (canonical(case), frozenset(off))
        if key not in self._cache:
            self.calls += 1
            self._keep(key, self._ask(case, key[1]))
        return self._cache[key]

    def preload(self, key: Key, answer: Any) -> None:
        """An answer known already (a resumed build's journal): never asked again."""
        self._cache[key] = answer

    def prefetch(self, wanted: Sequence[tuple[Any, Iterable[str]]]) -> None:
        """Ask for the answers not cached yet, in batches when the oracle is a ``lines``
        command (one at a time otherwise)."""
        keys: dict[Key, Any] = {}
        for case, off in wanted:
            key = (canonical(case), frozenset(off))
            if key not in self._cache:
                keys[key] = case
        if self.spec.command is None or self.spec.protocol != "lines":
            for key, case in keys.items():
                self.answer(case, key[1])
            return
        todo = list(keys.items())
        for start in range(0, len(todo), BATCH):
            chunk = todo[start : start + BATCH]
            answers = self._ask_lines([(case, key[1]) for key, case in chunk])
            self.calls += len(chunk)
            for (key, _), answer in zip(chunk, answers, strict=True):
                self._keep(key, answer)

    def close(self) -> None:
        if self._lines is not None:
            self._lines.close()
            self._lines = None

    def _keep(self, key: Key, answer: Any) -> None:
        self._cache[key] = answer
        if self.record is not None:
            self.record(key, answer)
        if self.cache_bytes is not None:
            self._bound(key, len(key[0]) + len(canonical(answer)))

    def _ask_lines(self, asks: Sequence[tuple[Any, frozenset[str]]]) -> list[Any]:
        assert self.spec.command is not None
        if self._lines is None:
            self._lines = LineProcess(
                self.folder,
                self.spec.command,
                timeout=self.spec.answer_timeout,
                retries=self.spec.retries,
            )
        requests = [{"case": case, "off": sorted(off)} for case, off in asks]
        try:
            replies = self._lines.ask(requests)
        except TaskCommandError as exc:
            raise GradingError(f"the oracle failed on a case: {exc}") from None
        answers = []
        for reply in replies:
            if not isinstance(reply, dict) or "answer" not in reply:
                raise GradingError('the oracle replied without an "answer" to a case')
            answers.append(reply["answer"])
        return answers

    def _bound(self, key: Key, size: int) -> None:
        self._sizes[key] = size
        self._cached += size
        while self.cache_bytes is not None and self._cached > self.cache_bytes and self._sizes:
            oldest = next(iter(self._sizes))
            self._cached -= self._sizes.pop(oldest)
            del self._cache[oldest]

    def _ask(self, case: Any, off: frozenset[str]) -> Any:
        if self.spec.command is not None and self.spec.protocol == "lines":
            return self._ask_lines([(case, off)])[0]
        if self.spec.command is not None:
            words, env = switched_off(self.spec.command, self.spec.switches, sorted(off))
            for attempt in range(self.spec.retries + 1):
                try:
                    return run_json_command(
                        self.folder, words, case=case, env=env, timeout=self.spec.answer_timeout
                    )
                except TaskCommandTimeout as exc:  # a slow answer is asked again
                    if attempt == self.spec.retries:
                        raise GradingError(f"the oracle failed on a case: {exc}") from None
                except TaskCommandError as exc:
                    raise GradingError(f"the oracle failed on a case: {exc}") from None
            raise GradingError("the oracle failed on a case")
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
