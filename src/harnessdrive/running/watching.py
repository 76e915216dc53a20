"""Follow a results folder while a run writes it, from another process or terminal.

Reads only what the driver writes anyway: the in-flight records (a trial started), what the
running trials are doing (``live.json``: each one's phase as it changes, and a summary line of
them all with their turns and spend, running/live_board.py), each attempt's ``result.json`` (a
trial finished, with its verdict and charge) and the results lock (whether a run still holds
the folder). It takes no lock and writes nothing, so it never
disturbs the run it follows, on whatever executor that run is.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from harnessdrive.running.live_board import LiveFile
from harnessdrive.store.paths import ResultsPaths
from harnessdrive.store.results import TrialResult

POLL_SECONDS = 0.5


@dataclass(frozen=True)
class WatchEvent:
    kind: str
    """``started`` or ``finished``; a phase a trial entered (``setup``, ``agent``,
    ``grading``, ``recording``); ``running``: what the running trials do, in a line."""
    trial_id: str
    detail: str = ""

    def line(self) -> str:
        if not self.trial_id:
            return f"{self.kind:<9} {self.detail}"
        return f"{self.kind:<9} {self.trial_id}" + (f"  {self.detail}" if self.detail else "")


def run_holds(lock: Path) -> bool:
    """Whether a live process holds ``lock`` (a results folder's run lock), read from the
    kernel's table of locks: taking it, even for a moment, could refuse a run starting."""
    try:
        inode = lock.stat().st_ino
        table = Path("/proc/locks").read_text()
    except OSError:
        return False
    for row in table.splitlines():
        parts = row.split()
        if len(parts) > 5 and parts[1] == "FLOCK" and parts[5].endswith(f":{inode}"):
            return True
    return False


class Watcher:
    """What changed in a results folder since the last look."""

    def __init__(self, results: Path) -> None:
        self.paths = ResultsPaths(results)
        self._started: set[str] = set()
        self._finished: dict[Path, float] = {}
        self._phases: dict[str, str] = {}
        self._summary = ""

    def look(self) -> list[WatchEvent]:
        events: list[WatchEvent] = []
        for record in sorted(self.paths.inflight.glob("*.json")):
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                trial_id = str(json.loads(record.read_text())["trial_id"])
                if trial_id not in self._started:
                    self._started.add(trial_id)
                    events.append(WatchEvent("started", trial_id))
        for path in sorted(self.paths.root.glob("trials/**/result.json")):
            with contextlib.suppress(OSError):
                changed = path.stat().st_mtime
                if self._finished.get(path) == changed:
                    continue
                try:
                    result = TrialResult.model_validate_json(path.read_bytes())
                except ValidationError:
                    continue  # being written: read again next time
                self._finished[path] = changed
                self._started.add(result.trial_id)
                events.append(WatchEvent("finished", result.trial_id, _detail(result)))
        events.extend(self._live())
        return events

    def _live(self) -> list[WatchEvent]:
        """What the running trials do, when a run holds the folder (a file left by a killed
        run says nothing true)."""
        try:
            live = LiveFile.model_validate_json(self.paths.live.read_bytes())
        except (OSError, ValidationError):
            return []  # no run, or the file is being replaced: read again next time
        if not self.running:
            return []
        events = []
        for trial_id, each in live.trials.items():
            if each.phase != "starting" and self._phases.get(trial_id) != each.phase:
                self._phases[trial_id] = each.phase
                events.append(WatchEvent(each.phase, trial_id, _phase_detail(each.calls, each.usd)))
        summary = live.running().summary()
        if summary != self._summary:
            self._summary = summary
            events.append(WatchEvent("running", "", summary))
        return events

    @property
    def running(self) -> bool:
        return run_holds(self.paths.lock)


def _phase_detail(calls: int, usd: float) -> str:
    words = [f"turn {calls}"] if calls else []
    return ", ".join([*words, f"${usd:.4f}"] if usd else words)


def _detail(result: TrialResult) -> str:
    where = f" on {result.node}" if result.node else ""
    lost = sum(1 for each in result.retries if each.reason == "worker_lost")
    retried = f", {lost} lost tr{'y' if lost == 1 else 'ies'}" if lost else ""
    return f"{result.status} {result.outcome} ${result.cost.charged_usd:.4f}{where}{retried}"


def watch(
    results: Path,
    emit: Callable[[WatchEvent], None],
    *,
    once: bool = False,
    poll: float = POLL_SECONDS,
) -> None:
    """Emit what happens in ``results`` until no run holds it (after one look with ``once``)."""
    watcher = Watcher(results)
    while True:
        going = watcher.running
        for event in watcher.look():
            emit(event)
        if once or not going:
            return
        time.sleep(poll)


__all__ = ["WatchEvent", "Watcher", "run_holds", "watch"]
