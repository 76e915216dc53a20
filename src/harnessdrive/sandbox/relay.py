"""Loopback-only networking for a sandbox with its own network namespace.

A sandbox in ``loopback`` mode has a network namespace of its own, so the host's 127.0.0.1 (where
the scripted model server listens) is out of reach like everything else. For each allowed port
the driver serves a Unix socket that connects to that port on the host's loopback, and
:mod:`harnessdrive.sandbox.relay_inner` listens on the same port inside and joins the two. No
other address is reachable.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from harnessdrive.sandbox.scratch import make_scratch_root

INNER_SCRIPT = Path(__file__).with_name("relay_inner.py")
_INSIDE = "/run/harnessdrive-relay"


class LoopbackRelay:
    """Host side of the relay for one sandboxed process; :meth:`close` when it has ended."""

    def __init__(self, ports: Sequence[int]) -> None:
        self.ports = tuple(ports)
        self.folder = make_scratch_root("harnessdrive-relay-")
        self._listeners: list[socket.socket] = []
        self._closed = threading.Event()
        for port in self.ports:
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            _bind(listener, self.folder, str(port))
            listener.listen(64)
            self._listeners.append(listener)
            threading.Thread(target=self._serve, args=(listener, port), daemon=True).start()

    def bind_argv(self) -> list[str]:
        return [
            "--ro-bind",
            str(INNER_SCRIPT),
            f"{_INSIDE}/relay_inner.py",
            "--bind",
            str(self.folder),
            f"{_INSIDE}/sockets",
        ]

    def wrap(self, command: Sequence[str]) -> list[str]:
        ports = ",".join(str(p) for p in self.ports)
        script = f"{_INSIDE}/relay_inner.py"
        return [sys.executable, "-I", "-S", script, f"{_INSIDE}/sockets", ports, "--", *command]

    def close(self) -> None:
        self._closed.set()
        for listener in self._listeners:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _serve(self, listener: socket.socket, port: int) -> None:
        while not self._closed.is_set():
            try:
                inside, _ = listener.accept()
            except OSError:
                return
            try:
                host = socket.create_connection(("127.0.0.1", port), timeout=10)
                host.settimeout(None)
            except OSError:
                inside.close()
                continue
            threading.Thread(target=_join, args=(inside, host), daemon=True).start()


_UNIX_PATH_MAX = 107
"""The longest path a Unix socket binds to (108 bytes with its terminating NUL)."""


def _bind(listener: socket.socket, folder: Path, name: str) -> None:
    """Bind ``listener`` to ``folder/name``, however long the scratch folder's path is (a deep
    ``TMPDIR``): through the folder's descriptor when the path itself is too long."""
    path = folder / name
    if len(os.fsencode(path)) <= _UNIX_PATH_MAX:
        listener.bind(str(path))
        return
    fd = os.open(folder, os.O_PATH | os.O_DIRECTORY)
    try:
        listener.bind(f"/proc/self/fd/{fd}/{name}")
    finally:
        os.close(fd)


def _join(a: socket.socket, b: socket.socket) -> None:
    """Carry bytes both ways until both sides are done, then close both."""
    other = threading.Thread(target=_pump, args=(b, a), daemon=True)
    other.start()
    _pump(a, b)
    other.join()
    a.close()
    b.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
