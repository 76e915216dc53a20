"""What a process prints, kept up to a limit: the head and the tail, never the whole of it.

A process never writes our log files itself (it could fill the disk through them): it writes to a
pipe, and a thread of ours copies the first ``head`` bytes to the file, keeps the last ``tail``
bytes in memory, and once the pipe closes writes a one-line note and the tail. Memory stays
bounded by ``tail`` plus one read, whatever the process prints.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

DEFAULT_HEAD_BYTES = 2 * 1024 * 1024
DEFAULT_TAIL_BYTES = 2 * 1024 * 1024
_READ_BYTES = 1024 * 1024
_POLL_MS = 100
_DRAIN_SECONDS = 2.0
"""How long a pipe still held open by an escaped process is read after the run ended."""


@dataclass(frozen=True)
class OutputCap:
    """How much of each stream is kept."""

    head: int = DEFAULT_HEAD_BYTES
    tail: int = DEFAULT_TAIL_BYTES


@dataclass(frozen=True)
class StreamRecord:
    """What became of one stream: how much the process wrote and how much was kept."""

    written: int
    """Every byte the process wrote to the stream."""
    kept: int
    """Bytes of it in the log file (head plus tail)."""

    @property
    def cut(self) -> bool:
        return self.kept < self.written


def cut_note(written: int, kept_head: int, kept_tail: int) -> bytes:
    left_out = written - kept_head - kept_tail
    return (
        f"\n[harnessdrive: output cut: {written} bytes written; the first {kept_head} and the "
        f"last {kept_tail} are kept, {left_out} bytes between them were left out]\n"
    ).encode()


class CappedWriter:
    """Copies a stream into ``handle``: the head at once, the tail when :meth:`close` is called."""

    def __init__(self, handle: BinaryIO, cap: OutputCap) -> None:
        self._handle = handle
        self._cap = cap
        self._head_left = cap.head
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.written = 0

    def write(self, data: bytes) -> None:
        self.written += len(data)
        if self._head_left > 0:
            part = data[: self._head_left]
            self._handle.write(part)
            self._head_left -= len(part)
            data = data[len(part) :]
        if data and self._cap.tail > 0:
            self._tail.append(data)
            self._tail_size += len(data)
            while self._tail_size - len(self._tail[0]) >= self._cap.tail:
                self._tail_size -= len(self._tail.popleft())

    def close(self) -> StreamRecord:
        head = self._cap.head - self._head_left
        tail = b"".join(self._tail)[-self._cap.tail :] if self._cap.tail > 0 else b""
        if head + len(tail) < self.written:
            self._handle.write(cut_note(self.written, head, len(tail)))
        self._handle.write(tail)
        self._handle.flush()
        return StreamRecord(written=self.written, kept=head + len(tail))


class PipeCapture:
    """One pipe whose read end a thread copies into a log file through a :class:`CappedWriter`.

    ``write_fd`` goes to the child (as stdout, stderr or both); call :meth:`started` once the
    child has it, and :meth:`finish` once the child and everything it started are gone.
    """

    def __init__(self, log: Path, cap: OutputCap) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self._log = log.open("ab")
        self._writer = CappedWriter(self._log, cap)
        self._ended = threading.Event()
        self._thread = threading.Thread(target=self._pump, name="output-capture", daemon=True)
        self._thread.start()

    def started(self) -> None:
        """Close our copy of the write end: the pipe ends when the child's copies are gone."""
        self._close_write()

    def _close_write(self) -> None:
        if self.write_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.write_fd)
            self.write_fd = -1

    def _pump(self) -> None:
        poller = select.poll()
        poller.register(self.read_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        ended_at: float | None = None
        while True:
            if self._ended.is_set():
                # A process that escaped the kill may still hold the pipe: read what is
                # there for a moment, then stop.
                ended_at = ended_at or time.monotonic()
                if time.monotonic() - ended_at > _DRAIN_SECONDS:
                    return
            if not poller.poll(_POLL_MS):
                continue
            try:
                data = os.read(self.read_fd, _READ_BYTES)
            except OSError:
                return
            if not data:
                return
            self._writer.write(data)

    def finish(self) -> StreamRecord:
        self._close_write()
        self._ended.set()
        self._thread.join()
        with contextlib.suppress(OSError):
            os.close(self.read_fd)
        try:
            record = self._writer.close()
        finally:
            self._log.close()
        return record
