"""What the running trials of a run are doing, for the progress line and ``harnessdrive watch``.

Each trial's worker tells its phase, turns and spend as it runs (protocols/phases.py), through
its executor, from any thread; the board keeps the latest per trial. The driver looks at it
between its waits: it hands what changed to the progress and writes it, atomically and at most
that often, to ``live.json`` in the results folder, where ``watch`` reads it from another
terminal. The file is ephemeral: it names only trials running now, is removed when the run
ends, and one left by a killed driver is ignored (no run holds the folder) and replaced by
the next run. Nothing in it is a result.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from harnessdrive.protocols.phases import PHASES, Phase, TrialPhase
from harnessdrive.store.store import utc_now

SHOW_SECONDS = 0.5
"""The board is shown (and written) at most this often."""


@dataclass(frozen=True)
class RunningTrials:
    """The running trials at one moment, each with its last known phase, in start order."""

    trials: tuple[tuple[str, TrialPhase], ...]

    def summary(self) -> str:
        return summarize(phase for _, phase in self.trials)


def summarize(phases: Iterable[TrialPhase]) -> str:
    """``12 running: 7 agent (turn 4..19), 3 grading, 2 setup; $0.4200 spent so far``."""
    found = list(phases)
    if not found:
        return "0 running"
    counts = Counter(each.phase for each in found)
    parts = []
    for name in PHASES:
        if counts[name]:
            parts.append(f"{counts[name]} {name}{_turns(found, name)}")
    spent = sum(each.usd for each in found)
    text = f"{len(found)} running: " + ", ".join(parts)
    return text + (f"; ${spent:.4f} spent so far" if spent else "")


def _turns(found: list[TrialPhase], name: Phase) -> str:
    turns = sorted(each.calls for each in found if each.phase == name and each.calls)
    if name != "agent" or not turns:
        return ""
    low, high = turns[0], turns[-1]
    return f" (turn {low})" if low == high else f" (turn {low}..{high})"


class LiveTrial(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    phase: Phase
    calls: int = 0
    usd: float = 0.0


class LiveFile(BaseModel):
    """``live.json``: the running trials of the run that holds the folder."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    run_id: str
    updated: str
    trials: dict[str, LiveTrial]

    def running(self) -> RunningTrials:
        return RunningTrials(
            tuple(
                (trial_id, TrialPhase(each.phase, each.calls, each.usd))
                for trial_id, each in self.trials.items()
            )
        )


@dataclass(frozen=True)
class BoardListener:
    """One trial's ``on_phase``: its phases reach the board while it runs, and never after."""

    board: LiveBoard
    trial_id: str

    def __call__(self, phase: TrialPhase) -> None:
        self.board.update(self.trial_id, phase)


class LiveBoard:
    """The running trials' phases; :meth:`update` from any thread, the rest from the driver's."""

    def __init__(
        self, run_id: str, file: Path | None = None, *, interval: float = SHOW_SECONDS
    ) -> None:
        self.run_id = run_id
        self.file = file
        self._interval = interval
        self._shown_at = float("-inf")
        self._lock = threading.Lock()
        self._trials: dict[str, TrialPhase] = {}
        self._changed = False
        self.close()  # one a killed run left names trials no longer running

    def start(self, trial_id: str) -> BoardListener:
        """``trial_id`` was handed to the executor; what to tell its phases to."""
        with self._lock:
            self._trials[trial_id] = TrialPhase("starting")
            self._changed = True
        return BoardListener(self, trial_id)

    def update(self, trial_id: str, phase: TrialPhase) -> None:
        with self._lock:
            if trial_id in self._trials and self._trials[trial_id] != phase:
                self._trials[trial_id] = phase
                self._changed = True

    def finish(self, trial_id: str) -> None:
        with self._lock:
            if self._trials.pop(trial_id, None) is not None:
                self._changed = True

    def changed(self) -> RunningTrials | None:
        """The running trials when anything changed since they were last shown, at most once
        an interval (then written to the file), else None."""
        with self._lock:
            if not self._changed or time.monotonic() - self._shown_at < self._interval:
                return None
            self._changed = False
            self._shown_at = time.monotonic()
            running = RunningTrials(tuple(self._trials.items()))
        self._write(running)
        return running

    def close(self) -> None:
        """The run is over: the file goes."""
        if self.file is not None:
            with contextlib.suppress(OSError):
                self.file.unlink(missing_ok=True)

    def _write(self, running: RunningTrials) -> None:
        if self.file is None:
            return
        trials = {
            trial_id: LiveTrial(phase=each.phase, calls=each.calls, usd=each.usd)
            for trial_id, each in running.trials
        }
        data = LiveFile(run_id=self.run_id, updated=utc_now(), trials=trials)
        staged = self.file.with_name(f".{self.file.name}.{os.getpid()}")
        # The progress is no result: a full disk or a lost folder leaves it unwritten.
        with contextlib.suppress(OSError):
            staged.write_text(data.model_dump_json())
            os.replace(staged, self.file)
