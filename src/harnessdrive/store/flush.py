"""Put recorded files on disk in the background, off the path that records the next trial.

Every result is written atomically (a temporary file renamed over it), so a killed driver
leaves the old file or the new one, never half of one: that needs no wait for the disk.
Flushing it to disk, so that it also outlives a power cut, does wait, for as long as the
longest step of recording on a busy disk, so the driver hands it to this thread and goes on.
Closing waits until everything handed over is on disk. A power cut before then can only lose
results, and a trial whose result is missing or unreadable is run again by the next run.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path

from harnessdrive.store.atomic import flush_to_disk


class BackgroundFlush:
    def __init__(self) -> None:
        self._queue: queue.Queue[Path | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="harnessdrive-flush", daemon=True)
        self._thread.start()

    def add(self, path: Path) -> None:
        """Flush ``path`` (already written in full) and its folder to disk soon."""
        self._queue.put(path)

    def close(self) -> None:
        """Wait until every file handed over so far is on disk."""
        self._queue.put(None)
        self._thread.join()

    def _work(self) -> None:
        while (path := self._queue.get()) is not None:
            flush_to_disk(path)
