"""Finding and ending every process a command started.

A plain process tree is not enough: daemons double-fork out of it and start sessions of their
own. So besides the tree (read from /proc, cheaply) we look at the process group, the session,
the run's marker variable in each environment and each process's working folder. Inside a PID
namespace the namespace itself is the answer, and :func:`end_namespace` waits for it to end.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import psutil

from harnessdrive.sandbox.clock import now

MARKER_VARIABLE = "HARNESSDRIVE_RUN_MARKER"
GRACE_SECONDS = 2.0


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
    born_after: int | None = None,
) -> None:
    """Stop the process ``pid`` started, its group, session, descendants and marked strays.

    ``roots``: folders of this run; a process working in one of them is ours too. ``hard`` skips
    the polite SIGTERM (a fork bomb must not get time to multiply). ``sweep=False`` looks at the
    tree only (inside a PID namespace nothing can leave it), sparing a pass over every process.
    ``born_after``: the command's own :func:`start_ticks`; the sweep skips every process that
    started before it (none of them can be ours), and so reads almost nothing on a busy machine.
    """
    if hard:
        _kill_fast(pid)
    collect = functools.partial(_collect, born_after=born_after)
    victims = collect(pid, marker, roots, sweep, tree)
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
        victims += [p for p in collect(pid, marker, roots, sweep, tree) if p not in victims]
    if victims:
        # Some ignore SIGTERM; a second look also catches children they forked meanwhile.
        for _ in range(3):
            found = collect(pid, marker, roots, sweep, tree)
            alive = list({p.pid: p for p in [*victims, *found]}.values())
            for proc in alive:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            victims = _wait_gone(alive, GRACE_SECONDS)
            if not victims and not collect(pid, marker, roots, sweep, tree):
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


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat``); None if gone."""
    stat = _stat_fields(pid)
    return int(stat[19]) if stat is not None else None


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name: state, ppid, pgrp, ..."""
    # A bare descriptor: the sweep reads this for every process on the machine.
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        text = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    return text[text.rfind(b")") + 2 :].split()


def _collect(
    pid: int,
    marker: str | None,
    roots: Sequence[Path],
    sweep: bool = True,
    tree: bool = True,
    born_after: int | None = None,
) -> list[psutil.Process]:
    found: dict[int, psutil.Process] = {}
    for member in tree_pids(pid) if tree else ():
        with contextlib.suppress(psutil.Error):
            found[member] = psutil.Process(member)
    if not sweep:
        return [proc for proc in found.values() if _alive(proc)]
    prefixes = tuple(f"{os.path.realpath(r)}/" for r in roots)
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in found or int(name) == me:
            continue
        other = int(name)
        stat = _stat_fields(other)
        if stat is None or (born_after is not None and int(stat[19]) < born_after):
            continue
        ours = (
            int(stat[2]) == pid  # its process group
            or int(stat[3]) == pid  # its session
            or (marker is not None and _carries(other, f"{MARKER_VARIABLE}={marker}"))
            or (bool(prefixes) and _works_in(other, prefixes))
        )
        if ours:
            with contextlib.suppress(psutil.Error):
                found[other] = psutil.Process(other)
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
    _wait_gone(killed, GRACE_SECONDS)
    return len(killed)


def namespace_of(info_fd: int) -> tuple[int, int] | None:
    """The init pid and PID-namespace inode bubblewrap reported on ``info_fd`` (read once)."""
    try:
        info = json.loads(_read_available(info_fd) or b"{}")
        return int(info["child-pid"]), int(info["pid-namespace"])
    except (ValueError, KeyError, TypeError):
        return None


# How long to wait for a namespace killed at a limit to empty: every process in it has SIGKILL
# pending and can do nothing more, but thousands of them (a fork bomb) on a busy machine take a
# while to exit, and until then they hold their pids.
_DRAIN_SECONDS = 60.0


def end_namespace(namespace: tuple[int, int] | None, *, at_limit: bool = False) -> None:
    """Make sure the PID namespace of :func:`namespace_of` has ended.

    bubblewrap exits as soon as its command does, while its init may still be taking the
    namespace down; a daemon inside lives until then. Killing that init ends every process in
    the namespace at once (however fast a fork bomb in it multiplies), and the kernel lets the
    init become a zombie only once they are all gone. ``at_limit``: the namespace broke a limit
    and may hold thousands of processes; wait until they are gone, and help them go.
    """
    if namespace is None:
        return
    pid, inode = namespace
    if at_limit:
        _hurry(pid, inode)
    deadline = now() + (_DRAIN_SECONDS if at_limit else GRACE_SECONDS * 2)
    with _exit_waiter(pid) as wait:
        while now() < deadline:
            try:
                if os.stat(f"/proc/{pid}/ns/pid").st_ino != inode:
                    return  # the pid now belongs to someone else
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX":
                    return
            except (OSError, IndexError):
                return  # gone, or a zombie (whose namespaces are gone)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            wait(0.01)


@contextlib.contextmanager
def _exit_waiter(pid: int) -> Iterator[Callable[[float], None]]:
    """A wait that ends early when ``pid`` exits (a pidfd; a plain sleep where there is none):
    the namespace of every sandboxed command is waited for this way."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):

        def sleep(seconds: float) -> None:
            threading.Event().wait(seconds)

        yield sleep
        return
    poller = select.poll()
    poller.register(fd, select.POLLIN)

    def until_exit(seconds: float) -> None:
        poller.poll(seconds * 1000)

    try:
        yield until_exit
    finally:
        os.close(fd)


def _hurry(init: int, inode: int) -> None:
    """Kill the namespace's init, then give its process groups back a normal priority: each of
    their processes has SIGKILL pending and only needs a CPU to exit, which at the lowest
    priority on a busy machine can take many seconds for thousands of them."""
    try:
        if os.stat(f"/proc/{init}/ns/pid").st_ino != inode:
            return  # the pid now belongs to someone else
        children = Path(f"/proc/{init}/task/{init}/children").read_text().split()
    except OSError:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(init, signal.SIGKILL)
    for child in map(int, children):
        with contextlib.suppress(OSError):
            if os.stat(f"/proc/{child}/ns/pid").st_ino == inode:  # still ours, not a reused pid
                os.setpriority(os.PRIO_PGRP, os.getpgid(child), 0)


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
