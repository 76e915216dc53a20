"""Run one command with a wall-clock deadline and limits, and kill everything it started.

Every process gets its own session (so its process group can be signalled as a whole) and carries
a per-run marker in its environment. When the run ends, times out, breaks a limit or is stopped,
everything it started is killed (:mod:`harnessdrive.sandbox.tree` says how they are found).
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import subprocess
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from harnessdrive.errors import SandboxError
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.gate import Gate
from harnessdrive.sandbox.limits import (
    LimitName,
    Limits,
    Watchdog,
    cached_which,
    prlimit_binary,
    total_tasks,
    within_hard,
)
from harnessdrive.sandbox.output import OutputCap, PipeCapture, StreamRecord
from harnessdrive.sandbox.tree import (
    MARKER_VARIABLE,
    end_namespace,
    kill_tree,
    namespace_of,
    start_ticks,
    tree_pids,
)

_GRACE_SECONDS = 2.0
_POLL_SECONDS = 0.05
_SIGXFSZ_EXIT = 128 + signal.SIGXFSZ


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int | None
    """The exit status; negative when a signal ended it; None if it never started."""
    timed_out: bool
    seconds: float
    stopped: bool = False
    """True when :class:`StopToken` ended it early (a signal to the driver)."""
    limit: LimitName | None = None
    """The limit it broke (the tree was then killed, or the write refused), if any."""
    stdout_record: StreamRecord | None = None
    """How much it printed and how much of that was kept (:mod:`.output`)."""
    stderr_record: StreamRecord | None = None
    """The same for stderr; the stdout record itself when both went to one file."""
    began: float | None = None
    """When the command started, on :func:`~harnessdrive.sandbox.clock.now`'s clock."""

    @property
    def ok(self) -> bool:
        return (
            self.exit_code == 0 and not self.timed_out and not self.stopped and self.limit is None
        )


class StopToken:
    """Lets a signal handler end every running process promptly."""

    def __init__(self, parent: StopToken | None = None) -> None:
        self._event = threading.Event()
        self._parent = parent

    def stop(self) -> None:
        self._event.set()

    @property
    def stopped(self) -> bool:
        return self._event.is_set() or (self._parent is not None and self._parent.stopped)

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``, waking at a stop; True when stopped."""
        if self._parent is None:
            return self._event.wait(seconds)
        deadline = now() + seconds
        while not self.stopped:
            left = deadline - now()
            if left <= 0:
                return False
            self._event.wait(min(left, _POLL_SECONDS))
        return True

    def child(self) -> StopToken:
        """A token stopped by its own :meth:`stop` or by this one's: one job of many."""
        return StopToken(self)


@dataclass(frozen=True)
class Launch:
    """How to start the command beyond its argv (filled in by a sandbox back-end)."""

    limits: Limits | None = None
    watched: tuple[Path, ...] = ()
    """Folders whose size counts against the disk limit; also swept for stray processes."""
    pass_fds: tuple[int, ...] = ()
    """Descriptors for the process alone: closed here once it has started."""
    lower_priority: bool = True
    """Start it at the lowest CPU priority (a back-end that does so itself says False)."""
    sweep: bool = True
    """Look beyond the process tree for strays when it ends (not needed in a PID namespace)."""
    namespace_info: int | None = None
    """Read end of bubblewrap's ``--info-fd``: its PID namespace must be gone before we return."""
    output: OutputCap = field(default_factory=OutputCap)
    """How much of stdout and stderr is kept in their files."""
    gate: Gate | None = None
    """The argv starts its command through this gate's waiter (:mod:`.gate`), where it runs:
    the work ``meanwhile`` is done while the process starts. Closed here."""


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
    launch: Launch = Launch(),
    meanwhile: Callable[[], object] | None = None,
) -> ProcessResult:
    """Run ``argv`` until it exits, ``timeout`` seconds pass, ``stop`` fires or a limit breaks.

    ``meanwhile``: work that must be done before the command starts. Behind a ``launch.gate``
    it runs while the process starts (and builds its sandbox); without one, first.
    """
    handed = list(launch.pass_fds)
    try:
        if meanwhile is not None and launch.gate is None:
            meanwhile()
        return _run(argv, cwd, env, timeout, stdout, stderr, stdin, stop, launch, handed, meanwhile)
    finally:
        _close_all(handed)
        if launch.gate is not None:
            launch.gate.close()


def _close_all(fds: list[int]) -> None:
    """Close each descriptor once (the list empties, so a second call does nothing)."""
    while fds:
        with contextlib.suppress(OSError):
            os.close(fds.pop())


def _run(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    stdout: Path,
    stderr: Path,
    stdin: Path | None,
    stop: StopToken | None,
    launch: Launch,
    handed: list[int],
    meanwhile: Callable[[], object] | None,
) -> ProcessResult:
    marker = uuid.uuid4().hex
    full_env = dict(env)
    full_env[MARKER_VARIABLE] = marker
    stdout.parent.mkdir(parents=True, exist_ok=True)
    stderr.parent.mkdir(parents=True, exist_ok=True)
    limits = launch.limits
    command = list(argv)
    prlimit = prlimit_binary() if limits is not None else None
    if limits is not None and prlimit is not None:
        command = [prlimit, *limits.prlimit_argv(total_tasks()), "--", *command]
    if launch.lower_priority:
        command = [*niced(), *command]
    # The process writes into pipes we read, never into our files: what it prints is capped.
    out = PipeCapture(stdout, launch.output)
    shared = _same_file(stdout, stderr)
    err = out if shared else PipeCapture(stderr, launch.output)
    with open(stdin if stdin is not None else os.devnull, "rb") as inp:
        # The run's time is the command's own, from its start to its exit: what is set up
        # before (a sandbox, behind a gate) and cleaned up after (the tree, the namespace) is
        # ours, not the command's.
        gate = launch.gate
        launched = now()
        try:
            proc = subprocess.Popen(
                command,
                cwd=cwd,
                env=full_env,
                stdin=inp,
                stdout=out.write_fd,
                stderr=subprocess.STDOUT if shared else err.write_fd,
                start_new_session=True,
                close_fds=True,
                pass_fds=(*launch.pass_fds, *(gate.child_fds if gate else ())),
            )
        except OSError as exc:
            _finish(out, err)
            raise SandboxError(f"cannot start {argv[0]}: {exc}") from exc
        finally:
            _close_all(handed)
            if gate is not None:
                gate.started()
        out.started()
        err.started()
        born = start_ticks(proc.pid)  # not reaped yet, so still readable
        exited = _ExitSignal(proc)
        if limits is not None and prlimit is None:
            _limit_after_start(proc.pid, limits)
        timed_out = False
        stopped = False
        broken: LimitName | None = None
        watchdog: Watchdog | None = None
        try:
            ready = True
            if gate is not None:
                if meanwhile is not None:
                    meanwhile()
                ready = gate.wait_ready(timeout, lambda: stop is not None and stop.stopped)
                launched = now()
                if ready:
                    gate.release()
            watchdog = (
                Watchdog(limits, lambda cap: tree_pids(proc.pid, cap), launch.watched)
                if limits is not None
                else None
            )
            # Died at the gate, or hung there: over at once.
            deadline = launched + timeout if ready else launched
            while True:
                if exited.wait(_POLL_SECONDS):
                    break
                if stop is not None and stop.stopped:
                    stopped = True
                    break
                if now() >= deadline:
                    timed_out = True
                    break
                if watchdog is not None and (broken := watchdog.check()) is not None:
                    break
            ended = now()
        finally:
            exited.close()
            namespace = None
            if launch.namespace_info is not None:
                namespace = namespace_of(launch.namespace_info)
            # A limit hit in a PID namespace: one kill of its init ends every process in it at
            # once (a fork bomb cannot grow further); walking the dying tree would only take
            # CPU from the processes that must run to exit.
            namespace_ended = broken is not None and namespace is not None
            if namespace_ended:
                end_namespace(namespace, at_limit=True)
            kill_tree(
                proc.pid,
                marker,
                roots=launch.watched,
                hard=broken is not None and not namespace_ended,
                sweep=launch.sweep,
                # Once reaped, its pid may belong to someone else: only its group is still ours.
                tree=proc.poll() is None and not namespace_ended,
                born_after=born,
            )
            end_namespace(namespace)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=_GRACE_SECONDS)
            out_record, err_record = _finish(out, err)
    exit_code = proc.returncode
    if broken is None and limits is not None and limits.file_size is not None:
        if exit_code in (-signal.SIGXFSZ, _SIGXFSZ_EXIT):
            broken = "file_size"
        elif watchdog is not None:
            broken = watchdog.after_exit()
    return ProcessResult(
        exit_code=exit_code,
        timed_out=timed_out,
        seconds=ended - launched,
        began=launched,
        stopped=stopped,
        limit=broken,
        stdout_record=out_record,
        stderr_record=err_record,
    )


def _same_file(first: Path, second: Path) -> bool:
    return os.path.abspath(first) == os.path.abspath(second)


def _finish(out: PipeCapture, err: PipeCapture) -> tuple[StreamRecord, StreamRecord]:
    first = out.finish()
    return first, first if err is out else err.finish()


class _ExitSignal:
    """Wakes the moment the process exits (a pidfd), not at the next tick of a polling loop:
    every command's time would otherwise include up to a tick of waiting."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self._proc = proc
        self._fd: int | None = None
        self._poller: select.poll | None = None
        with contextlib.suppress(AttributeError, OSError):
            self._fd = os.pidfd_open(proc.pid)
            self._poller = select.poll()
            self._poller.register(self._fd, select.POLLIN)

    def wait(self, seconds: float) -> bool:
        """True once the process has exited (and been reaped); waits ``seconds`` at most."""
        if self._poller is None:
            try:
                self._proc.wait(timeout=seconds)
                return True
            except subprocess.TimeoutExpired:
                return False
        self._poller.poll(seconds * 1000)
        return self._proc.poll() is not None

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = self._poller = None


def niced() -> list[str]:
    """Lowest CPU priority, so that a fork bomb cannot starve the watchdog that stops it."""
    nice = cached_which("nice")
    return [nice, "-n", "19"] if nice else []


def _limit_after_start(pid: int, limits: Limits) -> None:
    """Without ``prlimit`` on the machine: set the same limits on the running process."""
    wanted = {
        resource.RLIMIT_FSIZE: limits.file_size,
        resource.RLIMIT_DATA: limits.memory,
    }
    # (psutil has no rlimit on macOS: there the limits are the watchdog's alone.)
    with contextlib.suppress(psutil.Error, OSError, ValueError, AttributeError):
        proc = psutil.Process(pid)
        for kind, value in wanted.items():
            if value is not None:
                value = within_hard(kind, value)
                proc.rlimit(kind, (value, value))
