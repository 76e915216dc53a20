"""Run a task's setup commands in a fresh copy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.commands import render, shell_argv
from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import Isolation, Sandbox


@dataclass(frozen=True)
class SetupOutcome:
    commands: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    seconds: float
    stopped: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.stopped


def run_setup(
    commands: Sequence[str],
    *,
    root: Path,
    sandbox: Sandbox,
    env: Mapping[str, str],
    timeout: float,
    log: Path,
    isolation: Isolation,
    values: Mapping[str, str],
    stop: StopToken | None = None,
) -> SetupOutcome:
    """Run each command in order until one fails; all share one ``timeout``."""
    started = now()
    rendered = tuple(render(command, values) for command in commands)
    for command in rendered:
        remaining = timeout - (now() - started)
        with log.open("ab") as handle:
            handle.write(f"$ {command}\n".encode())
        result = sandbox.run(
            shell_argv(command),
            cwd=root,
            env=env,
            timeout=max(remaining, 0.001),
            stdout=log,
            stderr=log,
            isolation=isolation,
            stop=stop,
        )
        if not result.ok:
            return SetupOutcome(
                rendered, result.exit_code, result.timed_out, now() - started, result.stopped
            )
    return SetupOutcome(rendered, 0, False, now() - started)
