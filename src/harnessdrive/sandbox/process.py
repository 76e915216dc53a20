"""Run one command with a wall-clock deadline, and kill everything it started.

Every process gets its own session (so its process group can be signalled as a whole) and carries
a per-run marker in its environment. When the run ends, times out or is stopped, we kill the group,
every descendant we can still see, and every process that still carries the marker: that last
sweep finds double-forked daemons that left both the group and the tree.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from harnessdrive.errors import SandboxError
from harnessdrive.sandbox.clock import now

MARKER_VARIABLE = "HARNESSDRIVE_RUN_MARKER"
_GRACE_SECONDS = 2.0
_POLL_SECONDS = 0.05


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int | None
    """The exit status; negative when a signal ended it; None if it never started."""
    timed_out: bool
    seconds: float
    stopped: bool = False
    """True when :class:`StopToken` ended it early (a signal to the driver)."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.stopped


class StopToken:
    """Lets a signal handler end every running process promptly."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def stop(self) -> None:
        self._event.set()

    @property
    def stopped(self) -> bool:
        return self._event.is_set()


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    stdout: Path,
    stderr: Path,
    stdin: Path | None = None,
    stop: StopToken | None = None,
) -> ProcessResult:
    """Run ``argv`` until it exits, ``timeout`` seconds pass, or ``stop`` fires."""
    marker = uuid.uuid4().hex
    full_env = dict(env)
    full_env[MARKER_VARIABLE] = marker
    started = now()
    stdout.parent.mkdir(parents=True, exist_ok=True)
    stderr.parent.mkdir(parents=True, exist_ok=True)
    with (
        open(stdout, "ab") as out,
        open(stderr, "ab") as err,
        open(stdin if stdin is not None else os.devnull, "rb") as inp,
    ):
        try:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=full_env,
                stdin=inp,
                stdout=out,
                stderr=err,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise SandboxError(f"cannot start {argv[0]}: {exc}") from exc
        timed_out = False
        stopped = False
        try:
            deadline = started + timeout
            while True:
                try:
                    proc.wait(timeout=_POLL_SECONDS)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if stop is not None and stop.stopped:
                    stopped = True
                    break
                if now() >= deadline:
                    timed_out = True
                    break
        finally:
            kill_tree(proc.pid, marker)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=_GRACE_SECONDS)
    exit_code = proc.returncode
    return ProcessResult(
        exit_code=exit_code, timed_out=timed_out, seconds=now() - started, stopped=stopped
    )


def kill_tree(pid: int, marker: str | None = None) -> None:
    """Stop the process ``pid`` started, its group, its descendants and marked strays."""
    victims = _collect(pid, marker)
    if not victims:
        return
    for proc in victims:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGTERM)
    _, alive = psutil.wait_procs(victims, timeout=0.2)
    if alive:
        # Some ignore SIGTERM; a second look also catches children they forked meanwhile.
        alive = list({p.pid: p for p in [*alive, *_collect(pid, marker)]}.values())
        for proc in alive:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        psutil.wait_procs(alive, timeout=_GRACE_SECONDS)


def _collect(pid: int, marker: str | None) -> list[psutil.Process]:
    found: dict[int, psutil.Process] = {}
    with contextlib.suppress(psutil.Error):
        root = psutil.Process(pid)
        found[root.pid] = root
        for child in root.children(recursive=True):
            found[child.pid] = child
    for proc in psutil.process_iter(["pid"]):
        if proc.pid in found or proc.pid == os.getpid():
            continue
        with contextlib.suppress(psutil.Error, OSError):
            if os.getpgid(proc.pid) == pid:
                found[proc.pid] = proc
                continue
            if marker is not None and _carries_marker(proc.pid, marker):
                found[proc.pid] = proc
    return list(found.values())


def _carries_marker(pid: int, marker: str) -> bool:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return f"{MARKER_VARIABLE}={marker}".encode() in environ
