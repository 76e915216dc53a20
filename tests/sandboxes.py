"""Helpers for tests that run real processes in a sandbox."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from harnessdrive.errors import UserError
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.limits import Limits
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.sandbox.runner import Isolation, Network, Sandbox, get_sandbox


def require_bwrap() -> None:
    """bubblewrap must work in CI (the test command installs it); elsewhere its tests skip."""
    try:
        get_sandbox("bwrap")
    except UserError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"bubblewrap is required in CI: {exc}")
        pytest.skip(str(exc))


def path_without_bwrap(folder: Path) -> str:
    """A PATH with every system program but bubblewrap (links in ``folder``)."""
    folder.mkdir(parents=True, exist_ok=True)
    for system in ("/usr/local/bin", "/usr/bin", "/bin"):
        if not os.path.isdir(system):
            continue
        for entry in os.scandir(system):
            if entry.name != "bwrap" and not (folder / entry.name).exists():
                (folder / entry.name).symlink_to(entry.path)
    return str(folder)


def sandbox_of(
    kind: str,
    *,
    hidden: tuple[Path, ...] = (),
    private: tuple[Path, ...] = (),
    shown: tuple[Path, ...] = (),
    limits: Limits | None = None,
) -> Sandbox:
    if kind == "bwrap":
        require_bwrap()
    return get_sandbox(
        "bwrap" if kind == "bwrap" else "none",
        hidden=hidden,
        private=private,
        shown=shown,
        limits=limits or Limits(),
    )


@dataclass
class Box:
    """A workspace, private HOME and tmp, and a way to run a shell script with them."""

    root: Path
    sandbox: Sandbox

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def out(self) -> Path:
        return self.root / "out.log"

    @property
    def err(self) -> Path:
        return self.root / "err.log"

    def run(
        self,
        script: str,
        *,
        timeout: float = 30,
        network: Network = "none",
        readonly: tuple[Path, ...] = (),
        ports: tuple[int, ...] = (),
        host_pids: bool = False,
        env: dict[str, str] | None = None,
        meanwhile: Callable[[], object] | None = None,
    ) -> ProcessResult:
        for path in (self.out, self.err):
            path.unlink(missing_ok=True)
        return self.sandbox.run(
            ["bash", "-c", script],
            cwd=self.work,
            env=base_environment(self.home, self.tmp, extra=env),
            timeout=timeout,
            stdout=self.out,
            stderr=self.err,
            isolation=Isolation(
                writable=(self.work, self.home, self.tmp),
                readonly=readonly,
                network=network,
                ports=ports,
                host_pids=host_pids,
            ),
            meanwhile=meanwhile,
        )

    def isolation(self) -> Isolation:
        return Isolation(writable=(self.work, self.home, self.tmp))

    def output(self) -> str:
        return self.out.read_text(errors="replace")

    def errors(self) -> str:
        return self.err.read_text(errors="replace")


def make_box(root: Path, sandbox: Sandbox) -> Box:
    box = Box(root, sandbox)
    for folder in (box.work, box.home, box.tmp):
        folder.mkdir(parents=True)
    return box


def box_for_kind(tmp_path: Path, kind: str, limits: Limits | None = None) -> Box:
    return make_box(tmp_path / "box", sandbox_of(kind, limits=limits))
