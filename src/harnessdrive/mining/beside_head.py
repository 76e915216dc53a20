"""HEAD's check and the candidates' checks at the same time, reported as if HEAD went first.

HEAD's run has the first rank, so it takes the first free worker; the candidates' runs use the
other workers meanwhile instead of leaving them idle. When HEAD fails, every run still going
is ended and HEAD's error is what mining reports. The candidates' progress waits until HEAD
has passed, so a failing HEAD prints its error and nothing about any candidate.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from harnessdrive.mining.checks import CandidateResult, Checker, Stopped
from harnessdrive.mining.validation import HeadCheck, Progress, ValidationOutcome, check_head
from harnessdrive.sandbox.clock import now

Validation = Callable[[Progress | None], ValidationOutcome]
"""Validation of the candidates, given where its progress goes."""


class HeldProgress:
    """Passes progress on once :meth:`release` is called; what came before waits until then."""

    def __init__(self, progress: Progress | None) -> None:
        self._progress = progress
        self._held: list[tuple[int, int, CandidateResult]] | None = []
        self._guard = threading.Lock()

    def __call__(self, done: int, total: int, result: CandidateResult) -> None:
        with self._guard:
            if self._held is not None:
                self._held.append((done, total, result))
                return
        if self._progress is not None:
            self._progress(done, total, result)

    def release(self) -> None:
        with self._guard:
            held, self._held = self._held or [], None
            # Under the guard, so a line that arrives meanwhile cannot overtake the held ones.
            if self._progress is not None:
                for done, total, result in held:
                    self._progress(done, total, result)


def heads_error(head_check: Future[HeadCheck]) -> BaseException | None:
    """What HEAD's check failed with, when that is what stopped validation; a stop that ended
    HEAD's run too (Ctrl-C, SIGTERM) is not HEAD's error, and stays the stop."""
    if not head_check.done() or head_check.cancelled():
        return None
    error = head_check.exception()
    return None if isinstance(error, Stopped) else error


def start_head_check(checker: Checker, head: str) -> Future[HeadCheck]:
    """HEAD's check, started now on a thread of its own (while the candidates are still being
    read); :func:`validate_beside_head` takes it as ``started``."""
    future: Future[HeadCheck] = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(check_head(checker, head))
        except BaseException as exc:  # the caller reads it from the future
            future.set_exception(exc)

    threading.Thread(target=run, name="mine-head", daemon=True).start()
    return future


def validate_beside_head(
    checker: Checker,
    head: str,
    validation: Validation,
    progress: Progress | None,
    *,
    started: Future[HeadCheck] | None = None,
) -> tuple[HeadCheck, ValidationOutcome]:
    """HEAD's check (``started`` already, or now) beside ``validation``; HEAD's error (a
    UserError) stops both. The outcome's ``seconds`` is the time both took together."""
    began = now()
    held = HeldProgress(progress)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mine-head") as pool:
        head_check = started if started is not None else pool.submit(check_head, checker, head)

        def on_head_done(done: Future[HeadCheck]) -> None:
            if done.cancelled() or done.exception() is not None:
                checker.halt()
            else:
                held.release()

        head_check.add_done_callback(on_head_done)
        try:
            outcome = validation(held)
        except BaseException:
            error = heads_error(head_check)
            if error is not None:
                raise error from None  # HEAD's error, not the halt it caused
            checker.halt()
            raise
        passed = head_check.result()
        held.release()  # done here too: the summary must not overtake the held lines
    # The two overlap: validation took from HEAD's start to the later of the two ends.
    return passed, dataclasses.replace(outcome, seconds=round(now() - began, 3))
