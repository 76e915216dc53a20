"""A command held at its start until the work that must come before it is done.

Building a sandbox takes milliseconds (namespaces, a dozen mounts), and so does preparing a grading
command's folder (its bytecode). A gate lets both happen at once: the process starts, builds its
sandbox and waits inside it, in a small shell at the gate; the caller does its work, waits until
the shell says it is there, and lets it go. The shell then becomes the command (``exec``), so the
time recorded from the release is the command's own, and what came before is ours.

The waiter is ``bash -p``: in privileged mode bash reads no ``BASH_ENV`` and imports no functions,
so the environment reaches the command unchanged and takes effect there alone.
"""

from __future__ import annotations

import contextlib
import os
import select
from collections.abc import Callable, Mapping, Sequence

from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.limits import cached_which

_READY = b"."
_TICK = 0.05
# Variables that bash reads on start even in privileged mode (and complains about, as read-only).
_UNSAFE = ("SHELLOPTS", "BASHOPTS")


def gated(
    argv: Sequence[str], env: Mapping[str, str], meanwhile: Callable[[], object] | None
) -> tuple[Gate | None, list[str]]:
    """A gate for work ``meanwhile`` (none without it, or where none can be had) and ``argv``
    behind it, to run where the command runs."""
    gate = Gate.open(env) if meanwhile is not None else None
    return gate, [*(gate.argv() if gate else ()), *argv]


class Gate:
    """Two pipes: the waiter writes one byte when it is ready, and reads one line to go."""

    def __init__(self, bash: str) -> None:
        self._bash = bash
        self._ready_read, self._ready_write = os.pipe()
        self._go_read, self._go_write = os.pipe()
        self._open = {self._ready_read, self._ready_write, self._go_read, self._go_write}

    @classmethod
    def open(cls, env: Mapping[str, str]) -> Gate | None:
        """A gate for a command run with ``env``; None where none can be had (no bash), and
        then the work comes first and the command after it, as without a gate."""
        bash = cached_which("bash")
        if bash is None or any(name in env for name in _UNSAFE):
            return None
        return cls(bash)

    def argv(self) -> list[str]:
        """The waiter, to put before the command's argv where the command will run (inside
        its sandbox). It closes the gate's descriptors before it becomes the command."""
        ready, go = self._ready_write, self._go_read
        script = (
            f"printf {_READY.decode()} >&{ready} && read -r -u {go} _ || exit 125;"
            f' exec {ready}>&- {go}<&-; exec "$@"'
        )
        return [self._bash, "-p", "-c", script, "harnessdrive-gate"]

    @property
    def child_fds(self) -> tuple[int, int]:
        """The waiter's ends, to hand to the process."""
        return (self._ready_write, self._go_read)

    def started(self) -> None:
        """The process has its ends: ours are closed, so its death reads as end of file."""
        self._close(*self.child_fds)

    def wait_ready(self, seconds: float, stopped: Callable[[], bool] | None = None) -> bool:
        """True once the waiter is at the gate; False when it died first, ``seconds`` passed
        or ``stopped()`` became true."""
        deadline = now() + seconds
        while True:
            left = deadline - now()
            if left <= 0 or (stopped is not None and stopped()):
                return False
            readable, _, _ = select.select([self._ready_read], [], [], min(left, _TICK))
            if readable:
                try:
                    return os.read(self._ready_read, 1) == _READY
                except OSError:
                    return False

    def release(self) -> None:
        """Let the command start. Only this lets it go: a gate closed unreleased ends the
        waiter (``read`` meets end of file), and the process is killed before that anyway."""
        with contextlib.suppress(OSError):  # it died at the gate
            os.write(self._go_write, b"\n")

    def close(self) -> None:
        """Close every descriptor still open (each once: a number may be reused after)."""
        self._close(*self._open)

    def _close(self, *fds: int) -> None:
        for fd in fds:
            if fd in self._open:
                self._open.discard(fd)
                with contextlib.suppress(OSError):
                    os.close(fd)
