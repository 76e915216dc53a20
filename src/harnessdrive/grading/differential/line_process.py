"""A task command that stays up: one JSON request a line in, one JSON reply a line out.

Starting an interpreter per answer costs far more than the answer, so an oracle or generator
declared with ``protocol = "lines"`` is started once (in the task folder, the allowlisted
environment) and sent requests in batches: a thread writes the batch while the replies are read,
so neither side waits on a full pipe. A reply that takes over the time limit ends the process;
it is started again and asked again from that request on, up to ``retries`` times per request.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harnessdrive.grading.differential.task_commands import TaskCommandError, fill_words
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.env import base_environment

MAX_LINE = 64 * 1024 * 1024
_READ = 256 * 1024


class LineProcess:
    """Asks a long-lived task command; every request gets exactly one reply, in order."""

    def __init__(
        self,
        folder: Path,
        words: Sequence[str],
        *,
        timeout: float,
        retries: int,
        fill: dict[str, str] | None = None,
    ) -> None:
        self.folder = folder
        self.words = [fill_words(word, fill or {}) for word in words]
        self.timeout = timeout
        self.retries = retries
        self.starts = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = bytearray()
        self._home = tempfile.TemporaryDirectory(prefix="harnessdrive-task-command-")

    def ask(self, requests: Sequence[Any]) -> list[Any]:
        """The reply to each request (a JSON value), in order."""
        replies: list[Any] = []
        attempts = 0
        while len(replies) < len(requests):
            got = self._batch(requests[len(replies) :])
            if got:
                attempts = 0
            replies += got
            if len(replies) < len(requests):  # the next one was too slow, or the process died
                attempts += 1
                if attempts > self.retries:
                    raise TaskCommandError(
                        f"{self.words[0]} gave no reply within {self.timeout:g}s ({attempts} tries)"
                    )
        return replies

    def close(self) -> None:
        self._end()
        self._home.cleanup()

    def _batch(self, requests: Sequence[Any]) -> list[Any]:
        process = self._running()
        assert process.stdin is not None
        data = b"".join(json.dumps(r).encode() + b"\n" for r in requests)

        def write() -> None:
            with contextlib.suppress(OSError, ValueError):
                assert process.stdin is not None
                process.stdin.write(data)
                process.stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        replies: list[Any] = []
        try:
            for _ in requests:
                line = self._line(process, now() + self.timeout)
                if line is None:
                    self._end()
                    break
                try:
                    replies.append(json.loads(line))
                except ValueError:
                    raise TaskCommandError(
                        f"{self.words[0]} printed a line that is not JSON"
                    ) from None
        finally:
            if len(replies) < len(requests):
                self._end()
            writer.join()
        return replies

    def _running(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._end()
        home = Path(self._home.name)
        try:
            self._process = subprocess.Popen(
                self.words,
                cwd=self.folder,
                env=base_environment(home, home),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            raise TaskCommandError(f"{self.words[0]} cannot run: {exc.strerror}") from None
        self.starts += 1
        self._buffer.clear()
        return self._process

    def _line(self, process: subprocess.Popen[bytes], deadline: float) -> bytes | None:
        """The next line, or None when none came by ``deadline`` (or the process ended)."""
        assert process.stdout is not None
        fd = process.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - now()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, _READ)
            if not chunk:
                return None
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE:
                raise TaskCommandError(f"{self.words[0]} printed a line over {MAX_LINE} bytes")
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer[:] = rest
        return line

    def _end(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
