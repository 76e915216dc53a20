"""How a run tells the person watching what is happening. The CLI picks the rendering."""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO

from harnessdrive.running.live_board import RunningTrials
from harnessdrive.running.plan import PlannedTrial
from harnessdrive.store.results import TrialResult


class Progress(Protocol):
    def message(self, text: str) -> None: ...

    def trial_started(self, trial: PlannedTrial, number: int, total: int) -> None: ...

    def trial_finished(self, result: TrialResult, number: int, total: int) -> None: ...

    def trials_running(self, running: RunningTrials) -> None:
        """What the running trials are doing now (their phases, turns and spend), told when it
        changes, at most a few times a second."""
        ...

    def close(self) -> None: ...


PLAIN_SUMMARY_SECONDS = 30.0
"""A log gets the running trials' summary at most this often."""


def describe(result: TrialResult) -> str:
    """``pass``, ``fail (timeout)``, ``could not run: <error>``, ... in a few words."""
    if result.status == "could_not_run":
        reason = result.agent.hint or result.agent.error or "see agent.stderr"
        return f"could not run: {reason}"
    if result.status in ("interrupted", "skipped"):
        return result.status + (f": {result.note}" if result.note else "")
    text = result.outcome.replace("_", " ")  # "not graded", as the scoreboard says
    if result.status in ("timeout", "crashed"):
        text += f" ({result.status})"
    if result.grading and result.grading.findings:
        text += " — " + ", ".join(sorted({f.code for f in result.grading.findings}))
    if result.grading and result.grading.error:
        text += f": {result.grading.error}"
    return text


class PlainProgress:
    """One line per event, for logs and pipes."""

    def __init__(
        self, stream: TextIO | None = None, *, summary_seconds: float = PLAIN_SUMMARY_SECONDS
    ) -> None:
        self.stream: TextIO | None = stream or sys.stderr
        self._summary_seconds = summary_seconds
        self._summarized_at = float("-inf")
        self._summary = ""

    def message(self, text: str) -> None:
        self._line(text)

    def trial_started(self, trial: PlannedTrial, number: int, total: int) -> None:
        return None

    def trial_finished(self, result: TrialResult, number: int, total: int) -> None:
        self._line(
            f"[{number}/{total}] {result.variant_label} on {result.task}"
            f" (r{result.repetition}): {describe(result)} in {result.seconds.total:.1f}s"
        )

    def trials_running(self, running: RunningTrials) -> None:
        # A line in a log, when the summary changed and not too often.
        summary = running.summary()
        if not running.trials or summary == self._summary:
            return
        if time.monotonic() - self._summarized_at < self._summary_seconds:
            return
        self._summary, self._summarized_at = summary, time.monotonic()
        self._line(summary)

    def _line(self, text: str) -> None:
        if self.stream is None:
            return
        try:
            print(text, file=self.stream, flush=True)
        except (BrokenPipeError, ValueError):
            # Whoever read the progress went away: the run goes on and records every trial.
            self.stream = None

    def close(self) -> None:
        return None


class SilentProgress:
    def message(self, text: str) -> None:
        return None

    def trial_started(self, trial: PlannedTrial, number: int, total: int) -> None:
        return None

    def trial_finished(self, result: TrialResult, number: int, total: int) -> None:
        return None

    def trials_running(self, running: RunningTrials) -> None:
        return None

    def close(self) -> None:
        return None
