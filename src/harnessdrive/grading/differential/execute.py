"""Running cases through the candidate: one long-lived worker in the grading sandbox, fed as it
runs, watched from outside, and started again after a case hangs or crashes it.

Cases stream through one process, so a pure-Python candidate answers hundreds of cases in
seconds and the minimiser's tries cost no process start each. The supervisor reads the worker's
``B``/``R`` lines as they come; when one case runs past its limit it kills the worker's whole
sandbox and starts a new worker at the next case, so a hang or a crash costs that case alone.
The worker sees the repository read-only, an empty PATH, no network, and only the inputs of the
cases, never an answer.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harnessdrive.grading.differential.compare import canonical
from harnessdrive.grading.differential.static_check import DEFAULT_ALLOWED
from harnessdrive.grading.hostile import ANSWER_DEPTH, REFUSED, digest, load_json
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.process import ProcessResult, StopToken
from harnessdrive.sandbox.runner import Isolation, Network, Sandbox

WORKER = Path(__file__).with_name("worker_main.py")
_POLL_SECONDS = 0.001
READ_BYTES = 16 * 1024 * 1024
MAX_LINE = 32 * 1024 * 1024
"""Bytes of one results line; the worker keeps an answer well under it."""
MAX_FORBIDDEN = 64
"""Distinct refusals of the run-time guard kept per candidate: the candidate can write ``F``
lines itself, and each kept one becomes a finding in the verdict."""
STARTUP_SECONDS = 20.0
"""How long the worker may take to import the candidate (and between cases it is sent)."""
WORKER_SECONDS = 24 * 3600.0
"""The sandbox's own deadline for one worker; the supervisor's per-case limits come first."""


@dataclass(frozen=True)
class CaseAnswer:
    """What the candidate gave for one case: an answer, or why it gave none."""

    index: int
    answer: Any = None
    error: str | None = None


@dataclass(frozen=True)
class CandidateRun:
    answers: tuple[CaseAnswer, ...]
    workers: int
    """Worker processes started so far in the session (1 + one per hang or crash)."""
    seconds: float
    disturbed: str | None = None
    """Why the machinery, not the candidate, ended the run (the grading was stopped)."""


@dataclass(frozen=True)
class Candidate:
    """Where and how to call the candidate."""

    sandbox: Sandbox
    python: str
    root: Path
    module: str
    function: str
    work: Path
    """A folder of the grader's own, outside ``root``: inputs, results and logs."""
    home: Path
    tmp: Path
    case_timeout: float
    stop: StopToken | None = None
    hide: tuple[Path, ...] = ()
    network: Network = "none"
    """Grading never changes it; only ``check``'s oracle-wrapper baseline reaches the oracle."""
    env: Mapping[str, str] = field(default_factory=dict)
    allowed: frozenset[str] | None = DEFAULT_ALLOWED
    """Modules the worker's run-time guard lets the candidate import (beside its own); None:
    no guard (``check``'s oracle wrapper, our own code, which must reach the network)."""
    max_answer_bytes: int | None = None
    """An answer whose canonical JSON is longer is not held: its case fails with its size and
    digest, so a candidate's huge answers never pile up in the driver (None: no bound)."""


def run_cases(candidate: Candidate, inputs: Sequence[Any]) -> CandidateRun:
    """The candidate's answer to each of ``inputs``, in order, from a session of its own."""
    with CandidateSession(candidate) as session:
        return session.answer(inputs)


class CandidateSession:
    """A worker kept alive across batches of cases; started again, at the next case, after a
    case hangs or crashes it."""

    def __init__(self, candidate: Candidate) -> None:
        self.candidate = candidate
        self.sandbox = hiding(candidate.sandbox, candidate.hide)
        self.workers = 0
        self.forbidden: set[str] = set()
        """Everything the run-time guard refused, over every worker."""
        self._worker: _Worker | None = None
        self._seq = 0
        self._load_error: str | None = None
        candidate.work.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(WORKER, candidate.work / WORKER.name)

    def __enter__(self) -> CandidateSession:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._worker is not None:
            self._worker.end()
            self._worker = None

    def answer(self, inputs: Sequence[Any]) -> CandidateRun:
        started = now()
        first = self._seq
        self._seq += len(inputs)
        pending = list(range(first, first + len(inputs)))
        got: dict[int, CaseAnswer] = {}
        stop = self.candidate.stop
        while pending:
            if self._load_error is not None:
                got.update({n: CaseAnswer(n, error=self._load_error) for n in pending})
                break
            if stop is not None and stop.stopped:
                break
            worker = self._running()
            worker.send([(n, inputs[n - first]) for n in pending])
            pending = worker.collect(pending, got, self.candidate.case_timeout)
            self.forbidden |= worker.forbidden
            if len(self.forbidden) > MAX_FORBIDDEN:
                self.forbidden = set(sorted(self.forbidden)[:MAX_FORBIDDEN])
            self._load_error = worker.load_error
            if worker.finished:
                self._worker = None
        if stop is not None and stop.stopped:
            return CandidateRun((), self.workers, now() - started, "grading was stopped")
        answers = tuple(replace(got[n], index=n - first) for n in range(first, self._seq))
        return CandidateRun(answers, self.workers, now() - started)

    def _running(self) -> _Worker:
        if self._worker is None:
            self.workers += 1
            self._worker = _Worker(self.candidate, self.sandbox, self.workers)
        return self._worker


class _Worker:
    """One worker process in the sandbox, fed through a file it reads as it grows."""

    def __init__(self, candidate: Candidate, sandbox: Sandbox, number: int) -> None:
        work = candidate.work
        self.inputs = work / f"inputs-{number}.jsonl"
        self.results = work / f"results-{number}" / "results.txt"
        self.results.parent.mkdir()
        self.inputs.write_text("", encoding="utf-8")
        self.token = StopToken()
        self.outer = candidate.stop
        self.max_answer_bytes = candidate.max_answer_bytes
        self.load_error: str | None = None
        self.forbidden: set[str] = set()
        """What the run-time guard refused the candidate (``F`` lines)."""
        self.result: ProcessResult | None = None
        self._offset, self._pending = 0, b""
        self._current: int | None = None
        self._begun: set[int] = set()
        self._since = now()
        argv = [
            candidate.python,
            "-I",
            "-B",
            str(work / WORKER.name),
            str(candidate.root),
            candidate.module,
            candidate.function,
            str(self.inputs),
            str(self.results),
            json.dumps(None if candidate.allowed is None else sorted(candidate.allowed)),
        ]
        env = {
            "PATH": "",
            "HOME": str(candidate.home),
            "TMPDIR": str(candidate.tmp),
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
            **candidate.env,
        }
        isolation = Isolation(
            writable=(self.results.parent, candidate.home, candidate.tmp),
            readonly=(candidate.root, self.inputs, work / WORKER.name),
            network=candidate.network,
        )
        log = work / f"worker-{number}.log"

        def run() -> None:
            self.result = sandbox.run(
                argv,
                cwd=candidate.root,
                env=env,
                timeout=WORKER_SECONDS,
                stdout=log,
                stderr=log,
                isolation=isolation,
                stop=self.token,
            )

        self._thread = threading.Thread(target=run, name="differential-worker", daemon=True)
        self._thread.start()

    @property
    def finished(self) -> bool:
        return not self._thread.is_alive()

    def send(self, rows: Sequence[tuple[int, Any]]) -> None:
        with self.inputs.open("a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps({"i": n, "input": v}) + "\n" for n, v in rows))

    def end(self) -> None:
        if not self.finished:
            with self.inputs.open("a", encoding="utf-8") as handle:
                handle.write("END\n")
            self._thread.join(timeout=STARTUP_SECONDS)
            if not self.finished:
                self._kill()

    def collect(
        self, pending: list[int], got: dict[int, CaseAnswer], case_timeout: float
    ) -> list[int]:
        """Read answers until every pending case has one or the worker has to go; returns the
        cases still to send to a new worker."""
        self._since = now()
        waiting = set(pending)
        while waiting:
            self._read(got, waiting)
            if not waiting or self.load_error is not None:
                return []
            if self.outer is not None and self.outer.stopped:
                self._kill()
                return []
            if self.finished:
                self._read(got, waiting)
                if not waiting:
                    return []
                began = self._current in waiting
                culprit = self._current if began and self._current is not None else min(waiting)
                how = how_it_ended(self.result)
                why = f"crashed ({how})" if began else f"the candidate's worker ended ({how})"
                return self._fail(culprit, why, pending, got, waiting)
            limit = case_timeout if self._current is not None else STARTUP_SECONDS
            if now() - self._since > limit:
                self._kill()
                self._read(got, waiting)
                if not waiting:
                    return []
                hung = self._current is not None and self._current in waiting
                culprit = self._current if hung and self._current is not None else min(waiting)
                why = (
                    f"timeout: over {case_timeout:g}s"
                    if hung
                    else "the candidate's worker did not answer"
                )
                return self._fail(culprit, why, pending, got, waiting)
            time.sleep(_POLL_SECONDS)
        return []

    def _fail(
        self,
        culprit: int,
        why: str,
        pending: list[int],
        got: dict[int, CaseAnswer],
        waiting: set[int],
    ) -> list[int]:
        got[culprit] = CaseAnswer(culprit, error=why)
        waiting.discard(culprit)
        return [n for n in pending if n in waiting]

    def _kill(self) -> None:
        self.token.stop()
        self._thread.join()

    def _read(self, got: dict[int, CaseAnswer], waiting: set[int]) -> None:
        try:
            chunk = _read_regular(self.results, self._offset, READ_BYTES)
        except OSError:
            return
        if not chunk:
            return
        self._offset += len(chunk)
        *lines, self._pending = (self._pending + chunk).split(b"\n")
        if len(self._pending) > MAX_LINE:  # no line of ours is this long: the candidate's junk
            self._pending = b""
        for raw in lines:
            kind, _, rest = raw.decode("utf-8", errors="replace").partition(" ")
            try:
                if kind == "B":
                    self._began(int(rest), waiting)
                elif kind == "R" and self._answered(_line_json(rest), got, waiting):
                    self._current, self._since = None, now()
                elif kind == "F" and len(self.forbidden) < MAX_FORBIDDEN:
                    self.forbidden.add(str(_line_json(rest))[:300])
                elif kind == "L":
                    self.load_error = f"cannot load the candidate: {_line_json(rest)}"[:300]
                    got.update({n: CaseAnswer(n, error=self.load_error) for n in waiting})
                    waiting.clear()
            except REFUSED:
                continue  # a line the candidate garbled: its case stays unanswered

    def _began(self, number: int, waiting: set[int]) -> None:
        # Each case starts its clock once: the candidate can write this file too, and a "B"
        # line repeated must never keep a hang alive.
        if number in waiting and number not in self._begun:
            self._begun.add(number)
            self._current, self._since = number, now()

    def _answered(self, row: Any, got: dict[int, CaseAnswer], waiting: set[int]) -> bool:
        """Take the answer ``row`` gives; False when it answers no case still waiting."""
        number = int(row["i"])
        answer, error = row.get("answer"), row.get("error")
        text = canonical(answer)
        bound = self.max_answer_bytes
        if bound is not None and len(text) > bound:
            answer = None
            error = f"an answer of {len(text)} characters of JSON ({digest(text)})"
        if number not in waiting:
            return False
        got[number] = CaseAnswer(number, answer, None if error is None else str(error)[:300])
        waiting.discard(number)
        return True


def _read_regular(path: Path, offset: int, limit: int) -> bytes:
    """At most ``limit`` bytes of ``path`` from ``offset``. The candidate can replace the file:
    a link is not followed (it could name another worker's answers) and anything but a regular
    file reads as nothing (a pipe with no writer would block the grader for ever)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.pread(fd, limit, offset)
    finally:
        os.close(fd)


def _line_json(text: str) -> Any:
    """One value of a results line: the candidate can write this file, so it is read bounded
    (a number that overflows, nesting past the stack, a string UTF-8 cannot hold such as a
    lone surrogate, which no stored result could be written with, are a garbled line)."""
    value = load_json(text, "a worker's results line", max_bytes=MAX_LINE, depth=ANSWER_DEPTH)
    canonical(value).encode("utf-8")  # UnicodeEncodeError is a ValueError: refused
    return value


def how_it_ended(result: ProcessResult | None) -> str:
    """A candidate process's end in words: its limit, a signal or its exit code."""
    if result is None:
        return "no exit status"
    if result.limit is not None:
        return f"{result.limit.replace('_', ' ')} limit"
    code = result.exit_code
    return "killed by a signal" if code is None or code < 0 else f"exit {code}"


def hiding(sandbox: Sandbox, extra: tuple[Path, ...]) -> Sandbox:
    """``sandbox`` with ``extra`` host paths covered too (an oracle's binary, say)."""
    return sandbox.with_hidden(extra) if extra else sandbox
