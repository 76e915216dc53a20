"""One way to run every agent, setup and grading process, whatever the back-end.

``none`` runs a plain process group. ``bwrap`` (Debian's bubblewrap) adds mount, PID, user, IPC
and network namespaces; both take the same :class:`Isolation` so callers never branch on it.
A sandbox object belongs to one run: it knows the paths no process of the run may see and the
limits its processes get (:meth:`Sandbox.with_limits` makes the per-trial copy).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Protocol

from harnessdrive.errors import Setting, UserError
from harnessdrive.sandbox.gate import gated
from harnessdrive.sandbox.limits import Limits, default_limits
from harnessdrive.sandbox.process import Launch, ProcessResult, StopToken, run_process

Network = Literal["host", "loopback", "none"]
SandboxKind = Literal["auto", "bwrap", "none"]


@dataclass(frozen=True)
class Isolation:
    """What a sandboxed process may see besides the read-only system."""

    writable: tuple[Path, ...] = ()
    """Folders it may change: its workspace, private HOME and TMPDIR, an output folder."""
    readonly: tuple[Path, ...] = ()
    """Further paths it may read, bound at the same place. A path inside a writable folder is
    made read-only there (the hidden tests in a grading copy); ``none`` cannot enforce that."""
    network: Network = "none"
    ports: tuple[int, ...] = ()
    """With ``loopback``: ports on the host's 127.0.0.1 it may reach (besides those named in
    ``http://127.0.0.1:PORT`` or ``localhost:PORT`` values of its environment)."""
    tools: tuple[Path, ...] = ()
    """Folders of the programs it runs (a CLI's install), shown read-only; the run's hidden
    paths inside them stay covered."""
    host_pids: bool = False
    """The nested-sandbox profile for agents whose own sandbox insists on mounting /proc: the
    host PID namespace and /proc are shared. The agent can then see and signal processes of the
    same user, so only a harness that needs it asks for it."""


@dataclass(frozen=True)
class SandboxSettings:
    """What a run's sandbox knows beyond each call's :class:`Isolation`."""

    hidden: tuple[Path, ...] = ()
    """Paths no process may see even where the system is visible: the results folder, the
    suite and task folders, the user's repositories, the hidden files, the scratch root. A
    tool folder inside one of them is not shown either."""
    private: tuple[Path, ...] = ()
    """Paths covered like ``hidden`` but with the tool folders inside them shown again: the
    real HOME and the current folder."""
    shown: tuple[Path, ...] = ()
    """Extra folders every process of the run sees read-only (``--show``)."""
    limits: Limits | None = field(default_factory=Limits)


class Sandbox(Protocol):
    @property
    def name(self) -> str:
        """``none`` or ``bwrap``; every report says which ran."""
        ...

    @property
    def settings(self) -> SandboxSettings: ...

    def with_limits(self, limits: Limits | None) -> Sandbox:
        """The same sandbox with other limits (each trial gets its task's)."""
        ...

    def with_hidden(self, extra: tuple[Path, ...]) -> Sandbox:
        """The same sandbox with ``extra`` host paths covered too (an oracle's binary, say)."""
        ...

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
        """Run ``argv`` as :func:`~harnessdrive.sandbox.process.run_process` does. ``meanwhile``:
        work to finish before the command starts (preparing its folder), done while the sandbox
        is built where the back-end can; the command's time counts from its own start."""
        ...


class PlainSandbox:
    """No isolation beyond a process group, the environment policy, limits and tree kill."""

    name = "none"

    def __init__(self, settings: SandboxSettings | None = None) -> None:
        self.settings = settings or SandboxSettings()

    def with_limits(self, limits: Limits | None) -> PlainSandbox:
        return PlainSandbox(replace(self.settings, limits=limits))

    def with_hidden(self, extra: tuple[Path, ...]) -> PlainSandbox:
        return PlainSandbox(replace(self.settings, hidden=(*self.settings.hidden, *extra)))

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
        gate, held = gated(argv, env, meanwhile)
        return run_process(
            held,
            cwd=cwd,
            env=env,
            timeout=timeout,
            stdout=stdout,
            stderr=stderr,
            stdin=stdin,
            stop=stop,
            meanwhile=meanwhile,
            launch=Launch(limits=self.settings.limits, watched=isolation.writable, gate=gate),
        )


def piped_argv(
    sandbox: Sandbox,
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    isolation: Isolation,
) -> list[str]:
    """The command line that runs ``argv`` under ``sandbox`` for a long-lived process the caller
    starts itself with pipes (the served oracle): ``argv`` itself under ``none``, wrapped in
    bubblewrap with the run's hidden paths and ``isolation`` under ``bwrap``. Limits (a memory
    limit, a deadline) are the caller's to set, as the process is not :meth:`Sandbox.run`'s."""
    if sandbox.name != "bwrap":
        return list(argv)
    from harnessdrive.sandbox.bwrap import piped_command

    return piped_command(argv, cwd=cwd, env=env, isolation=isolation, settings=sandbox.settings)


def get_sandbox(
    kind: SandboxKind = "auto",
    *,
    hidden: Sequence[Path] = (),
    private: Sequence[Path] = (),
    shown: Sequence[Path] = (),
    limits: Limits | None = None,
) -> Sandbox:
    """The sandbox to run with: ``auto`` is bubblewrap when it works here, else ``none``.

    Raises :class:`UserError` when ``bwrap`` is asked for and cannot run. Whether ``none`` may
    stand in for ``auto`` is the caller's to decide (it depends on what will run).
    """
    from harnessdrive.sandbox.bwrap import BwrapSandbox, bwrap_problem

    settings = SandboxSettings(
        hidden=tuple(hidden),
        private=tuple(private),
        shown=tuple(shown),
        limits=limits or default_limits(),
    )
    if kind == "none":
        return PlainSandbox(settings)
    problem = bwrap_problem()
    if problem is None:
        return BwrapSandbox(settings)
    if kind == "bwrap":
        raise UserError(
            f"sandbox bwrap: {problem}; choose the sandbox none to run without one",
            settings=(Setting("sandbox", "none"),),
        )
    return PlainSandbox(settings)


def sandbox_problem() -> str | None:
    """Why bubblewrap cannot sandbox here, or None when it can."""
    from harnessdrive.sandbox.bwrap import bwrap_problem

    return bwrap_problem()


def describe_sandbox(kind: SandboxKind = "auto") -> tuple[str, str]:
    """Which sandbox ``kind`` gives here and why, for ``doctor``."""
    from harnessdrive.sandbox.bwrap import bwrap_problem, bwrap_version

    problem = bwrap_problem()
    if kind != "none" and problem is None:
        return "bwrap", (
            f"{bwrap_version()}: agents see the system read-only, their workspace, a private "
            "HOME and /tmp; PID, user, IPC and network namespaces"
        )
    reason = "asked for" if kind == "none" else problem
    return "none", (
        f"no sandbox ({reason}): agents run as plain processes; install bubblewrap to contain them"
    )
