"""A candidate given as a command: one sandboxed process per case.

Each case is a process of its own in the grading sandbox, under the same containment as the
worker of a ``module:function`` candidate: the repository read-only, a private HOME and tmp,
an empty PATH, no network, the allowlisted environment only, and nothing of the answers. Its
time limit is the sandbox's own deadline on the monotonic clock, so a hang costs that case
alone, and what it prints is kept only up to a cap: an answer over it fails the case.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessdrive.grading.differential.compare import canonical
from harnessdrive.grading.differential.execute import (
    MAX_LINE,
    CandidateRun,
    CaseAnswer,
    hiding,
    how_it_ended,
)
from harnessdrive.grading.differential.task_commands import CASE_WORD
from harnessdrive.grading.hostile import ANSWER_DEPTH, REFUSED, load_json
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.process import ProcessResult, StopToken
from harnessdrive.sandbox.runner import Isolation, Sandbox

PYTHON_WORDS = frozenset({"python", "python3"})


@dataclass(frozen=True)
class CommandCandidate:
    """Where and how to run the candidate's command."""

    sandbox: Sandbox
    python: str
    root: Path
    words: tuple[str, ...]
    work: Path
    home: Path
    tmp: Path
    case_timeout: float
    stop: StopToken | None = None
    hide: tuple[Path, ...] = ()


def python_module(words: Sequence[str], root: Path) -> str | None:
    """The repository module a Python command runs (``python -m a.b``, ``python a/b.py``), for
    the static check; None for any other command."""
    if not words or words[0] not in PYTHON_WORDS:
        return None
    rest = list(words[1:])
    for n, word in enumerate(rest):
        if word == "-m" and n + 1 < len(rest):
            return rest[n + 1]
        if word.endswith(".py"):
            path = (root / word).resolve()
            if path.is_relative_to(root.resolve()):
                return ".".join(path.relative_to(root.resolve()).with_suffix("").parts)
            return None
    return None


class CommandSession:
    """Answers cases with one sandboxed run of the command each."""

    def __init__(self, candidate: CommandCandidate) -> None:
        self.candidate = candidate
        self.sandbox = hiding(candidate.sandbox, candidate.hide)
        self.workers = 0
        """Processes started: one per case."""
        self.forbidden: set[str] = set()
        """A command has no run-time guard: the sandbox alone contains it."""
        self._program, self._problem = _program(candidate)
        candidate.work.mkdir(parents=True, exist_ok=True)

    def __enter__(self) -> CommandSession:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        return  # nothing outlives a case: each process ends with its sandbox

    def answer(self, inputs: Sequence[Any]) -> CandidateRun:
        started = now()
        answers = []
        for index, case in enumerate(inputs):
            stop = self.candidate.stop
            if stop is not None and stop.stopped:
                return CandidateRun((), self.workers, now() - started, "grading was stopped")
            answers.append(self._one(index, case))
        return CandidateRun(tuple(answers), self.workers, now() - started)

    def _one(self, index: int, case: Any) -> CaseAnswer:
        if self._program is None:
            return CaseAnswer(index, error=self._problem)
        c = self.candidate
        self.workers += 1
        folder = c.work / f"case-{self.workers}"
        folder.mkdir()
        case_file = folder / "case.json"
        case_file.write_text(json.dumps(case), encoding="utf-8")
        words = [self._program, *c.words[1:]]
        by_file = any(CASE_WORD in word for word in words)
        argv = [word.replace(CASE_WORD, str(case_file)) for word in words]
        env = base_environment(c.home, c.tmp, source={}, extra={"PYTHONHASHSEED": "0"})
        env["PATH"] = ""  # the candidate finds no program by name: not git, not a shell
        out, err = folder / "stdout", folder / "stderr"
        result = self.sandbox.run(
            argv,
            cwd=c.root,
            env=env,
            timeout=c.case_timeout,
            stdout=out,
            stderr=err,
            stdin=None if by_file else case_file,
            isolation=Isolation(
                writable=(c.home, c.tmp), readonly=(c.root, case_file), network="none"
            ),
            stop=c.stop,
        )
        return CaseAnswer(index, *_answer(result, out, c.case_timeout))


def _answer(result: ProcessResult, out: Path, timeout: float) -> tuple[Any, str | None]:
    if result.timed_out:
        return None, f"timeout: over {timeout:g}s"
    if result.limit is not None or result.exit_code != 0:
        return None, f"crashed ({how_it_ended(result)})"
    if result.stdout_record is not None and result.stdout_record.cut:
        return None, f"the answer was cut: {result.stdout_record.written} bytes printed"
    try:
        printed = out.read_bytes()
    except OSError:
        return None, "did not print one JSON value"
    try:
        answer = load_json(printed, "an answer", max_bytes=MAX_LINE, depth=ANSWER_DEPTH)
        canonical(answer).encode("utf-8")  # a lone surrogate could never be stored
    except REFUSED:
        return None, "did not print one JSON value"
    return answer, None


def _program(candidate: CommandCandidate) -> tuple[str | None, str]:
    """The first word as the sandbox runs it, or None and why it cannot run."""
    word = candidate.words[0]
    if word in PYTHON_WORDS:
        return candidate.python, ""
    if "/" in word:
        path = (candidate.root / word).resolve()
        if not path.is_relative_to(candidate.root.resolve()) or not path.is_file():
            return None, f"cannot run {word}: no such file in the repository"
        return str(path), ""
    found = shutil.which(word)
    return (found, "") if found else (None, f"cannot run {word}: not found on the host")
