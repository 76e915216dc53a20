"""The bubblewrap back-end.

Each process runs in new user, mount, PID, IPC and UTS namespaces (and a network namespace unless
the network is ``host``). It sees the system read-only (:mod:`harnessdrive.sandbox.mounts`), its
writable folders at their own paths, a fresh /tmp, /var/tmp and /dev/shm of bounded size, and
nothing else: not the user's repository, the suite, the hidden files, the results or other trials.

Nested sandboxes: agents such as Codex start bubblewrap themselves. That needs an unprivileged
user namespace inside ours, which the kernel refuses to a process mapped to the host's root
without CAP_SETFCAP, so when we run as root the sandbox user is uid 1000 (still the same user on
the host side) with every capability dropped. An inner ``bwrap --proc`` still fails under our PID
namespace; inner sandboxes work without ``--proc`` (Codex retries that way), and
``Isolation(host_pids=True)`` is the profile for one that insists.

When the sandbox ends (its command exits, a deadline, a stop or a limit), killing bwrap kills its
PID namespace, so a double-forked daemon cannot outlive its trial.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pwd
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from harnessdrive.sandbox.gate import Gate, gated
from harnessdrive.sandbox.limits import Limits, MiB
from harnessdrive.sandbox.mounts import system_argv, tool_view
from harnessdrive.sandbox.process import Launch, ProcessResult, StopToken, niced, run_process
from harnessdrive.sandbox.relay import LoopbackRelay
from harnessdrive.sandbox.runner import Isolation, SandboxSettings
from harnessdrive.sandbox.scratch import make_scratch_root

NESTED_UID = 1000
# /tmp, /var/tmp and /dev/shm live in memory: kept small (tools honour TMPDIR, on disk).
_TMPFS_CAP = 256 * MiB
_LOCAL_PORT = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\]):(\d{2,5})\b")


@functools.cache
def bwrap_binary() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def bwrap_version() -> str:
    binary = bwrap_binary()
    if binary is None:
        return "bubblewrap is not installed"
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).strip() or "bubblewrap"


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox here (None when it can); tried once per process."""
    binary = bwrap_binary()
    if binary is None:
        return "bubblewrap (bwrap) is not installed"
    uid, gid = sandbox_ids()
    argv = [
        binary,
        *_namespace_argv(Isolation(), uid, gid),
        *system_argv(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        "/bin/sh",
        "-c",
        "exit 0",
    ]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap cannot start: {exc}"
    if out.returncode != 0:
        detail = out.stderr.strip().splitlines()
        return f"bubblewrap cannot create a sandbox here: {detail[-1] if detail else 'failed'}"
    return None


def nested_problem() -> str | None:
    """Why an agent's own bubblewrap would fail inside ours (None when it starts)."""
    binary = bwrap_binary()
    if binary is None or bwrap_problem() is not None:
        return bwrap_problem()
    inner = f"{binary} --ro-bind / / --unshare-all --dev /dev -- /bin/sh -c 'exit 0'"
    scratch = make_scratch_root()
    try:
        out = BwrapSandbox(SandboxSettings(limits=None)).run(
            ["/bin/sh", "-c", inner],
            cwd=scratch,
            env={"PATH": os.defpath},
            timeout=30,
            stdout=scratch / "out",
            stderr=scratch / "out",
            isolation=Isolation(writable=(scratch,)),
        )
        if out.ok:
            return None
        text = (scratch / "out").read_text(errors="replace").strip().splitlines()
        return f"an inner bubblewrap fails: {text[-1] if text else out.exit_code}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def sandbox_ids() -> tuple[int, int]:
    """The uid and gid inside: ours, except that root becomes 1000 (see the module notes)."""
    uid, gid = os.getuid(), os.getgid()
    return (uid or NESTED_UID, gid or NESTED_UID)


class BwrapSandbox:
    name = "bwrap"

    def __init__(self, settings: SandboxSettings | None = None) -> None:
        self.settings = settings or SandboxSettings()

    def with_limits(self, limits: Limits | None) -> BwrapSandbox:
        return BwrapSandbox(replace(self.settings, limits=limits))

    def with_hidden(self, extra: tuple[Path, ...]) -> BwrapSandbox:
        return BwrapSandbox(replace(self.settings, hidden=(*self.settings.hidden, *extra)))

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        stdout: Path,
        stderr: Path,
        isolation: Isolation,
        stdin: Path | None = None,
        stop: StopToken | None = None,
        meanwhile: Callable[[], object] | None = None,
    ) -> ProcessResult:
        binary = bwrap_binary()
        if binary is None:
            from harnessdrive.errors import SandboxError

            raise SandboxError("bubblewrap (bwrap) is not installed")
        fds: list[int] = []
        relay: LoopbackRelay | None = None
        gate: Gate | None = None
        handed = False
        info_read, info_write = os.pipe()
        try:
            fds.append(info_write)
            passwd = _passwd_fd()
            if passwd is not None:
                fds.append(passwd)
            # The sandbox is built while ``meanwhile`` runs; the command waits for it inside.
            gate, held = gated(argv, env, meanwhile)
            # Lowest priority inside: bwrap's own init (which takes the namespace down when
            # we kill bwrap) keeps the normal priority and so dies promptly under a fork bomb.
            command = [*niced(), *held]
            relay_args: list[str] = []
            if isolation.network == "loopback":
                ports = sorted({*isolation.ports, *loopback_ports(env)})
                if ports:
                    relay = LoopbackRelay(ports)
                    relay_args = relay.bind_argv()
                    command = relay.wrap(command)
            full = [
                binary,
                *build_argv(
                    isolation,
                    cwd=cwd,
                    env=env,
                    settings=self.settings,
                    tmpfs_size=_tmpfs_size(self.settings.limits),
                    passwd_fd=passwd,
                    extra=["--info-fd", str(info_write), *relay_args],
                ),
                "--",
                *command,
            ]
            handed = True  # run_process closes ``fds`` from here on
            return run_process(
                full,
                cwd=cwd,
                env=env,
                timeout=timeout,
                stdout=stdout,
                stderr=stderr,
                stdin=stdin,
                stop=stop,
                meanwhile=meanwhile,
                launch=Launch(
                    gate=gate,
                    limits=self.settings.limits,
                    watched=isolation.writable,
                    pass_fds=tuple(fds),
                    lower_priority=False,
                    sweep=isolation.host_pids,
                    namespace_info=info_read,
                ),
            )
        finally:
            for fd in [info_read, *([] if handed else fds)]:
                with contextlib.suppress(OSError):
                    os.close(fd)
            if gate is not None and not handed:
                gate.close()
            if relay is not None:
                relay.close()


def piped_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    isolation: Isolation,
    settings: SandboxSettings,
) -> list[str]:
    """The whole command line that runs ``argv`` in a bwrap sandbox, for a long-lived process
    the caller starts itself with pipes and ends by killing its process group (killing bwrap
    takes the namespace down). It dies with the thread that starts it (``--die-with-parent``),
    so a caller starts it from a thread that outlives it."""
    binary = bwrap_binary()
    if binary is None:
        from harnessdrive.errors import SandboxError

        raise SandboxError("bubblewrap (bwrap) is not installed")
    options = build_argv(
        isolation,
        cwd=cwd,
        env=env,
        settings=settings,
        tmpfs_size=_tmpfs_size(settings.limits),
    )
    return [binary, *options, "--", *argv]


def build_argv(
    isolation: Isolation,
    *,
    cwd: Path,
    env: Mapping[str, str],
    settings: SandboxSettings | None = None,
    tmpfs_size: int = _TMPFS_CAP,
    passwd_fd: int | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """Every bwrap option for one process, in the order bwrap must apply them."""
    uid, gid = sandbox_ids()
    argv = [*_namespace_argv(isolation, uid, gid), *system_argv()]
    if isolation.host_pids:
        argv += ["--bind", "/proc", "/proc"]
    else:
        argv += ["--proc", "/proc"]
    argv += ["--dev", "/dev"]
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        argv += ["--perms", "1777", "--size", str(tmpfs_size), "--tmpfs", folder]
    settings = settings or SandboxSettings(limits=None)
    view = tool_view(
        env,
        secret=settings.hidden,
        private=settings.private,
        tools=(*isolation.tools, *settings.shown),
    )
    argv += view.argv
    if passwd_fd is not None:
        argv += ["--ro-bind-data", str(passwd_fd), "/etc/passwd"]
    for path in isolation.writable:
        text = os.path.abspath(path)
        argv += ["--bind", text, text]
    for path in isolation.readonly:
        text = os.path.abspath(path)
        argv += ["--ro-bind", text, text]
    for cover in view.covers:
        argv += ["--remount-ro", cover]
    # The root itself is a tmpfs of no set size: read-only, so nothing can fill memory there.
    argv += [*extra, "--remount-ro", "/", "--chdir", os.path.abspath(cwd)]
    return argv


def _namespace_argv(isolation: Isolation, uid: int, gid: int) -> list[str]:
    argv = [
        "--unshare-user",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--uid",
        str(uid),
        "--gid",
        str(gid),
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ]
    if not isolation.host_pids:
        argv.append("--unshare-pid")
    if isolation.network != "host":
        argv.append("--unshare-net")
    return argv


def loopback_ports(env: Mapping[str, str]) -> set[int]:
    """Ports of 127.0.0.1 URLs in the environment (a harness's model base URL, say)."""
    ports = set()
    for value in env.values():
        for match in _LOCAL_PORT.finditer(value):
            port = int(match.group(1))
            if 0 < port < 65536:
                ports.add(port)
    return ports


def _tmpfs_size(limits: Limits | None) -> int:
    if limits is None or limits.disk is None:
        return _TMPFS_CAP
    return max(min(limits.disk, _TMPFS_CAP), 1024 * 1024)


def _passwd_fd() -> int | None:
    """A passwd file naming the sandbox user, when the host's has no entry for it."""
    uid, gid = sandbox_ids()
    try:
        pwd.getpwuid(uid)
        return None
    except KeyError:
        pass
    try:
        text = Path("/etc/passwd").read_text()
    except OSError:
        text = ""
    line = f"agent:x:{uid}:{gid}:agent:/tmp:/bin/sh\n"
    fd = os.memfd_create("passwd")
    os.write(fd, (text.rstrip("\n") + "\n" + line).lstrip("\n").encode())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
