"""The pool of a case build: generated, answered and tagged in batches, with a journal.

Every case the generator makes and every answer the oracle gives is appended to a journal
beside the case set as it comes, so a build that is killed (or whose oracle fails at case 750)
starts again where it stopped: the journal's answers are never asked again. The journal is
kept only while its seed, profile, generator and oracle are the ones of the build, and removed
once the set is written.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from harnessdrive.errors import GradingError, UserError
from harnessdrive.grading.differential.compare import canonical
from harnessdrive.grading.differential.line_process import LineProcess
from harnessdrive.grading.differential.loading import task_callable
from harnessdrive.grading.differential.oracle import Key, Oracle
from harnessdrive.grading.differential.spec import DifferentialGradeSpec, GeneratorSpec
from harnessdrive.grading.differential.task_commands import TaskCommandError, run_json_command

GENERATOR_SECONDS = 30.0
CHUNK = 128
"""Cases generated and answered together."""


class PoolBuildError(UserError):
    """The pool cannot be built (the task's generator or oracle failed)."""


@dataclass(frozen=True)
class Tagged:
    index: int
    case: Any
    expected: Any
    rules: tuple[str, ...]
    isolated: bool


@dataclass(frozen=True)
class Pool:
    cases: list[Tagged]
    resumed: int
    """Answers and cases taken from an earlier, unfinished build's journal."""
    composes: bool | None
    """Whether switching two rules off together differed from either alone on some case that
    both change (None: no case two rules change)."""


def journal_path(cases: Path) -> Path:
    return cases.with_name(cases.name.removesuffix(".jsonl") + ".partial.jsonl")


def answer_pool(
    folder: Path,
    spec: DifferentialGradeSpec,
    *,
    pool: int,
    seed: int,
    profile: str,
    journal: Path,
) -> Pool:
    """``pool`` cases made from ``seed``, answered and tagged (duplicates kept once)."""
    header = {
        "seed": seed,
        "profile": profile,
        "oracle": spec.oracle.model_dump(mode="json"),
        "generator": spec.generator.model_dump(mode="json"),
    }
    made, answers = _read_journal(journal, header)
    resumed = len(made) + len(answers)
    journal.parent.mkdir(parents=True, exist_ok=True)
    with _journal_file(journal, header, fresh=not resumed) as out:

        def write(entry: dict[str, Any]) -> None:
            out.write(json.dumps(entry, separators=(",", ":")) + "\n")
            out.flush()

        def record(key: Key, answer: Any) -> None:
            write({"c": key[0], "off": sorted(key[1]), "a": answer})

        oracle = Oracle(folder, spec.oracle, record=record)
        for key, answer in answers.items():
            oracle.preload(key, answer)
        make = _Generator(folder, spec.generator, seed, profile)
        try:
            tagged: list[Tagged] = []
            seen: set[str] = set()
            composes: bool | None = None
            for start in range(0, pool, CHUNK):
                indexes = range(start, min(pool, start + CHUNK))
                missing = [i for i in indexes if i not in made]
                for index, case in zip(missing, make.many(missing), strict=True):
                    made[index] = case
                    write({"i": index, "case": case})
                fresh = []
                for index in indexes:
                    text = canonical(made[index])
                    if text not in seen:  # the same case made twice is one case
                        seen.add(text)
                        fresh.append(index)
                chunk, chunk_composes = _tag(oracle, spec, [(i, made[i]) for i in fresh])
                tagged += chunk
                if chunk_composes is not None:
                    composes = bool(composes) or chunk_composes
        except GradingError as exc:  # the task's oracle is broken: say so, in one line
            kept = "answers so far are kept; build again to resume"
            raise PoolBuildError(f"{exc} ({kept})") from None
        finally:
            oracle.close()
            make.close()
    return Pool(tagged, resumed, composes)


def _tag(
    oracle: Oracle, spec: DifferentialGradeSpec, cases: list[tuple[int, Any]]
) -> tuple[list[Tagged], bool | None]:
    rules = spec.oracle.rules
    every = frozenset(rules)
    oracle.prefetch(
        [(case, off) for _, case in cases for off in [(), every, *[(r,) for r in rules]]]
    )
    tags = {index: oracle.rules_of(case) for index, case in cases}
    second: list[tuple[Any, frozenset[str]]] = []
    for index, case in cases:
        if len(tags[index]) == 1:
            second.append((case, every - set(tags[index])))
        if len(tags[index]) >= 2:
            second.append((case, frozenset(tags[index][:2])))
    oracle.prefetch(second)
    composes: bool | None = None
    out = []
    for index, case in cases:
        found = tags[index]
        if len(found) >= 2:
            a, b = found[:2]
            both = canonical(oracle.answer(case, {a, b}))
            differs = both not in (
                canonical(oracle.answer(case, {a})),
                canonical(oracle.answer(case, {b})),
            )
            composes = bool(composes) or differs
        out.append(Tagged(index, case, oracle.answer(case), found, oracle.isolates(case, found)))
    return out, composes


class _Generator:
    """Case ``index`` by the task's function, command, or long-lived ``lines`` command."""

    def __init__(self, folder: Path, spec: GeneratorSpec, seed: int, profile: str) -> None:
        self.folder, self.spec, self.seed, self.profile = folder, spec, seed, profile
        self._function: Callable[[int, int, str], Any] | None = None
        self._lines: LineProcess | None = None
        if spec.function is not None:
            self._function = task_callable(folder, spec.function, "generator")
        elif spec.protocol == "lines":
            assert spec.command is not None
            self._lines = LineProcess(folder, spec.command, timeout=GENERATOR_SECONDS, retries=2)

    def many(self, indexes: list[int]) -> list[Any]:
        if not indexes:
            return []
        if self._lines is not None:
            requests = [{"index": i, "seed": self.seed, "profile": self.profile} for i in indexes]
            try:
                replies = self._lines.ask(requests)
            except TaskCommandError as exc:
                raise PoolBuildError(f"the generator failed: {exc}") from None
            if not all(isinstance(r, dict) and "case" in r for r in replies):
                raise PoolBuildError('the generator replied without a "case"')
            return [r["case"] for r in replies]
        return [self._one(i) for i in indexes]

    def _one(self, index: int) -> Any:
        if self._function is not None:
            return self._function(index, self.seed, self.profile)
        fill = {"index": str(index), "seed": str(self.seed), "profile": self.profile}
        try:
            return run_json_command(
                self.folder, self.spec.command or (), fill=fill, timeout=GENERATOR_SECONDS
            )
        except TaskCommandError as exc:
            raise PoolBuildError(f"the generator failed on case {index}: {exc}") from None

    def close(self) -> None:
        if self._lines is not None:
            self._lines.close()


def pool_generator(folder: Path, spec: GeneratorSpec, seed: int, profile: str) -> _Generator:
    """The task's generator for one seed and profile (close it when done)."""
    return _Generator(folder, spec, seed, profile)


def _read_journal(path: Path, header: dict[str, Any]) -> tuple[dict[int, Any], dict[Key, Any]]:
    made: dict[int, Any] = {}
    answers: dict[Key, Any] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return made, answers
    if not lines or _loads(lines[0]) != header:
        return made, answers  # another build's: started afresh
    for line in lines[1:]:
        entry = _loads(line)  # a line cut by the kill is skipped
        if not isinstance(entry, dict):
            continue
        if "i" in entry and "case" in entry:
            made[int(entry["i"])] = entry["case"]
        elif "c" in entry and "a" in entry:
            answers[(str(entry["c"]), frozenset(entry.get("off") or ()))] = entry["a"]
    return made, answers


def _loads(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


@contextlib.contextmanager
def _journal_file(path: Path, header: dict[str, Any], *, fresh: bool) -> Iterator[IO[str]]:
    mode = "w" if fresh else "a"
    with path.open(mode, encoding="utf-8") as out:
        if fresh:
            out.write(json.dumps(header, separators=(",", ":")) + "\n")
        elif not path.read_text(encoding="utf-8").endswith("\n"):
            out.write("\n")  # the kill cut the last line: it is skipped, the next starts clean
        out.flush()
        yield out
