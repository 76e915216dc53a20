"""Delete finished trials' scratch folders in the background.

Removing a workspace can take longer than everything else a trial does on some file systems
(each ``rmdir`` on ext4 mounted with ``discard`` waits for the disk), so the trial renames its
folder into the trash at once and this thread deletes it while the next trial runs.
"""

from __future__ import annotations

import os
import queue
import shutil
import threading
import uuid
from pathlib import Path


class Reaper:
    def __init__(self, trash: Path | None) -> None:
        """``trash``: a folder to move discarded folders into at once (on the same file system);
        without one they are deleted where they are, in the background all the same."""
        self.trash = trash
        if trash is not None:
            trash.mkdir(parents=True, exist_ok=True)
        self._queue: queue.Queue[Path | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="harnessdrive-reaper", daemon=True)
        self._thread.start()

    def discard(self, folder: Path) -> None:
        """Take ``folder`` out of the way now; its contents go soon after."""
        target = folder
        if self.trash is not None:
            target = self.trash / uuid.uuid4().hex
            try:
                os.replace(folder, target)
            except OSError:
                target = folder  # another file system: delete it where it is
        self._queue.put(target)

    def close(self) -> None:
        """Wait until everything discarded so far is gone."""
        self._queue.put(None)
        self._thread.join()
        if self.trash is not None:
            shutil.rmtree(self.trash, ignore_errors=True)

    def _work(self) -> None:
        while True:
            folder = self._queue.get()
            if folder is None:
                return
            shutil.rmtree(folder, ignore_errors=True)
