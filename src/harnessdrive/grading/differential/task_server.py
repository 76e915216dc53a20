"""The task's own oracle server (``[grade.oracle] server``), run for the agent's run alone.

It is the task author's program: it runs on the host in the task folder, in a process group
of its own with the allowlisted environment, told a free loopback port through its ``{port}``
word. harnessdrive waits until it listens, gives the agent its address, and stops the whole
group when the agent's run ends, before grading, so nothing the agent leaves can call it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.grading.differential.spec import OracleSpec
from harnessdrive.grading.differential.task_commands import fill_words
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.env import base_environment

_STOP_SECONDS = 5.0
_POLL_SECONDS = 0.02


@dataclass
class TaskServer:
    """A started server: its address, and why it is not serving (None while it is)."""

    url: str
    process: subprocess.Popen[bytes] | None
    scratch: Path
    problem: str | None = None

    def stop(self) -> bool:
        """Stop the server's whole process group; True when it was still serving."""
        alive = self.problem is None and self.process is not None and self.process.poll() is None
        if self.process is not None:
            _end_group(self.process)
        shutil.rmtree(self.scratch, ignore_errors=True)
        return alive


def start_task_server(folder: Path, spec: OracleSpec) -> TaskServer:
    """The task's server listening on a free loopback port, or one that says why it is not."""
    assert spec.server is not None
    port = _free_port()
    scratch = Path(tempfile.mkdtemp(prefix="harnessdrive-oracle-server-"))
    argv = [fill_words(word, {"port": str(port)}) for word in spec.server]
    url = f"http://127.0.0.1:{port}/"
    log = (scratch / "server.log").open("wb")
    try:
        process = subprocess.Popen(
            argv,
            cwd=folder,
            env=base_environment(scratch, scratch),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    except OSError as exc:
        return TaskServer(url, None, scratch, f"cannot start {argv[0]}: {exc.strerror}")
    finally:
        log.close()
    server = TaskServer(url, process, scratch)
    deadline = now() + spec.server_start_timeout
    while not _listening(port):
        if process.poll() is not None:
            server.problem = f"the oracle server exited {process.returncode} before listening"
            return server
        if now() > deadline:
            server.problem = f"the oracle server did not listen in {spec.server_start_timeout:g}s"
            return server
        time.sleep(_POLL_SECONDS)
    return server


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _end_group(process: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=_STOP_SECONDS)
            if sig == signal.SIGTERM:
                # The leader is gone; anything left of its group goes too.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
            return
        except subprocess.TimeoutExpired:
            continue
