"""Run one command with a wall-clock deadline and limits, and kill everything it started.

Every process gets its own session (so its process group can be signalled as a whole) and carries
a per-run marker in its environment. When the run ends, times out, breaks a limit or is stopped,
we kill the group, the session, every descendant we can still see, every process that still
carries the marker and every process whose working folder lies in the run's writable folders:
those last sweeps find double-forked daemons that left both the group and the tree. (Inside
bubblewrap the PID namespace makes this exact; see :mod:`harnessdrive.sandbox.bwrap`.)
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
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
from harnessdrive.sandbox.limits import LimitName, Limits, Watchdog, prlimit_binary, total_tasks

MARKER_VARIABLE = "HARNESSDRIVE_RUN_MARKER"
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

    @property
    def ok(self) -> bool:
        return (
            self.exit_code == 0 and not self.timed_out and not self.stopped and self.limit is None
        )


class StopToken:
    """Lets a signal handler end every running process promptly."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def stop(self) -> None:
        self._event.set()

    @property
    def stopped(self) -> bool:
        return self._event.is_set()


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
) -> ProcessResult:
    """Run ``argv`` until it exits, ``timeout`` seconds pass, ``stop`` fires or a limit breaks."""
    handed = list(launch.pass_fds)
    try:
        return _run(argv, cwd, env, timeout, stdout, stderr, stdin, stop, launch, handed)
    finally:
        _close_all(handed)


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
) -> ProcessResult:
    marker = uuid.uuid4().hex
    full_env = dict(env)
    full_env[MARKER_VARIABLE] = marker
    started = now()
    stdout.parent.mkdir(parents=True, exist_ok=True)
    stderr.parent.mkdir(parents=True, exist_ok=True)
    limits = launch.limits
    command = list(argv)
    prlimit = prlimit_binary() if limits is not None else None
    if limits is not None and prlimit is not None:
        command = [prlimit, *limits.prlimit_argv(total_tasks()), "--", *command]
    if launch.lower_priority:
        command = [*niced(), *command]
    with (
        open(stdout, "ab") as out,
        open(stderr, "ab") as err,
        open(stdin if stdin is not None else os.devnull, "rb") as inp,
    ):
        try:
            proc = subprocess.Popen(
                command,
                cwd=cwd,
                env=full_env,
                stdin=inp,
                stdout=out,
                stderr=err,
                start_new_session=True,
                close_fds=True,
                pass_fds=launch.pass_fds,
            )
        except OSError as exc:
            raise SandboxError(f"cannot start {argv[0]}: {exc}") from exc
        finally:
            _close_all(handed)
        if limits is not None and prlimit is None:
            _limit_after_start(proc.pid, limits)
        timed_out = False
        stopped = False
        broken: LimitName | None = None
        watchdog: Watchdog | None = None
        try:
            watchdog = (
                Watchdog(limits, lambda cap: tree_pids(proc.pid, cap), launch.watched)
                if limits is not None
                else None
            )
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
                if watchdog is not None and (broken := watchdog.check()) is not None:
                    break
        finally:
            kill_tree(
                proc.pid,
                marker,
                roots=launch.watched,
                hard=broken is not None,
                sweep=launch.sweep,
                # Once reaped, its pid may belong to someone else: only its group is still ours.
                tree=proc.poll() is None,
            )
            if launch.namespace_info is not None:
                end_namespace(launch.namespace_info)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=_GRACE_SECONDS)
    exit_code = proc.returncode
    if broken is None and limits is not None and limits.file_size is not None:
        if exit_code in (-signal.SIGXFSZ, _SIGXFSZ_EXIT):
            broken = "file_size"
        elif watchdog is not None:
            broken = watchdog.after_exit()
    return ProcessResult(
        exit_code=exit_code,
        timed_out=timed_out,
        seconds=now() - started,
        stopped=stopped,
        limit=broken,
    )


def end_namespace(info_fd: int) -> None:
    """Make sure the PID namespace bubblewrap reported on ``info_fd`` has ended.

    bubblewrap exits as soon as its command does, while its init may still be taking the
    namespace down; a daemon inside lives until then. Killing that init ends every process in
    the namespace, and the kernel lets the init become a zombie only once they are all gone.
    """
    try:
        info = json.loads(_read_available(info_fd) or b"{}")
        pid, namespace = int(info["child-pid"]), int(info["pid-namespace"])
    except (ValueError, KeyError, TypeError):
        return
    deadline = now() + _GRACE_SECONDS * 2
    while now() < deadline:
        try:
            if os.stat(f"/proc/{pid}/ns/pid").st_ino != namespace:
                return  # the pid now belongs to someone else
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX":
                return
        except (OSError, IndexError):
            return  # gone, or a zombie (whose namespaces are gone)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        threading.Event().wait(0.005)


def _read_available(fd: int) -> bytes:
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def niced() -> list[str]:
    """Lowest CPU priority, so that a fork bomb cannot starve the watchdog that stops it."""
    nice = shutil.which("nice")
    return [nice, "-n", "19"] if nice else []


def _limit_after_start(pid: int, limits: Limits) -> None:
    """Without ``prlimit`` on the machine: set the same limits on the running process."""
    import resource

    wanted = {
        resource.RLIMIT_FSIZE: limits.file_size,
        resource.RLIMIT_DATA: limits.memory,
    }
    # (psutil has no rlimit on macOS: there the limits are the watchdog's alone.)
    with contextlib.suppress(psutil.Error, OSError, ValueError, AttributeError):
        proc = psutil.Process(pid)
        for kind, value in wanted.items():
            if value is not None:
                proc.rlimit(kind, (value, value))


def tree_pids(pid: int, stop_after: int | None = None) -> list[int]:
    """``pid`` and its descendants, read from /proc/<pid>/task/*/children.

    Costs one small read per process of the tree, not a pass over every process on the machine,
    and stops early once ``stop_after`` are found: a fork bomb is counted as fast as it grows.
    """
    found = [pid]
    index = 0
    while index < len(found):
        current = found[index]
        index += 1
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                text = Path(f"/proc/{current}/task/{task}/children").read_text()
            except OSError:
                continue
            found.extend(int(child) for child in text.split())
        if stop_after is not None and len(found) > stop_after:
            break
    return found


def kill_tree(
    pid: int,
    marker: str | None = None,
    *,
    roots: Sequence[Path] = (),
    hard: bool = False,
    sweep: bool = True,
    tree: bool = True,
) -> None:
    """Stop the process ``pid`` started, its group, session, descendants and marked strays.

    ``roots``: folders of this run; a process working in one of them is ours too. ``hard`` skips
    the polite SIGTERM (a fork bomb must not get time to multiply). ``sweep=False`` looks at the
    tree only (inside a PID namespace nothing can leave it), sparing a pass over every process.
    """
    if hard:
        _kill_fast(pid)
    victims = _collect(pid, marker, roots, sweep, tree)
    if not victims:
        return
    if hard:
        for proc in victims:
            with contextlib.suppress(psutil.Error):
                proc.kill()
    else:
        for proc in victims:
            with contextlib.suppress(psutil.Error):
                proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)
        victims = _wait_gone(victims, 0.2)
        # A second look: something may have forked between the first look and the signal.
        victims += [p for p in _collect(pid, marker, roots, sweep, tree) if p not in victims]
    if victims:
        # Some ignore SIGTERM; a second look also catches children they forked meanwhile.
        for _ in range(3):
            found = _collect(pid, marker, roots, sweep, tree)
            alive = list({p.pid: p for p in [*victims, *found]}.values())
            for proc in alive:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            victims = _wait_gone(alive, _GRACE_SECONDS)
            if not victims and not _collect(pid, marker, roots, sweep, tree):
                break


def _kill_fast(pid: int) -> None:
    """SIGKILL the tree at once, top down, a few rounds: a process with SIGKILL pending cannot
    fork any more, however long it waits for a CPU to die on."""
    roots = {pid}
    for _ in range(5):
        pids: list[int] = []
        for root in roots:
            pids.extend(tree_pids(root))
        for victim in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(victim, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        found = set(pids)
        if found <= roots:
            return
        roots = found


def _collect(
    pid: int, marker: str | None, roots: Sequence[Path], sweep: bool = True, tree: bool = True
) -> list[psutil.Process]:
    found: dict[int, psutil.Process] = {}
    for member in tree_pids(pid) if tree else ():
        with contextlib.suppress(psutil.Error):
            found[member] = psutil.Process(member)
    if not sweep:
        return [proc for proc in found.values() if _alive(proc)]
    prefixes = tuple(f"{os.path.realpath(r)}/" for r in roots)
    me = os.getpid()
    for proc in psutil.process_iter(["pid"]):
        if proc.pid in found or proc.pid == me:
            continue
        with contextlib.suppress(psutil.Error, OSError):
            if os.getpgid(proc.pid) == pid or os.getsid(proc.pid) == pid:
                found[proc.pid] = proc
                continue
            if marker is not None and _carries(proc.pid, f"{MARKER_VARIABLE}={marker}"):
                found[proc.pid] = proc
                continue
            if prefixes and _works_in(proc.pid, prefixes):
                found[proc.pid] = proc
    return [proc for proc in found.values() if _alive(proc)]


def _wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait until each has exited (a zombie counts as gone); returns those still alive."""
    deadline = now() + timeout
    alive = [p for p in procs if _alive(p)]
    while alive and now() < deadline:
        threading.Event().wait(0.01)
        alive = [p for p in alive if _alive(p)]
    return alive


def _alive(proc: psutil.Process) -> bool:
    """Running or stopped, not a zombie waiting for a parent to reap it (it can do nothing)."""
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _carries(pid: int, text: str) -> bool:
    """Whether the process's environment holds ``text`` (only our own processes are readable)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return text.encode() in environ


def _works_in(pid: int, prefixes: tuple[str, ...]) -> bool:
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return False
    return f"{cwd}/".startswith(prefixes)


def kill_strays(path_text: str) -> int:
    """Kill every process whose environment or working folder mentions ``path_text``.

    Used on the scratch folder of a driver that is gone: its agents carry that folder in HOME and
    TMPDIR and work inside it. Returns how many were killed.
    """
    killed = []
    me = os.getpid()
    needle = path_text.rstrip("/") + "/"
    for proc in psutil.process_iter(["pid"]):
        if proc.pid == me:
            continue
        if _carries(proc.pid, needle) or _works_in(proc.pid, (needle,)):
            with contextlib.suppress(psutil.Error):
                proc.kill()
                killed.append(proc)
    _wait_gone(killed, _GRACE_SECONDS)
    return len(killed)
