"""Which shared environments a mined suite needs, and building them once per manifest set.

The store is a folder next to the suite's tasks. It holds a copy of
:mod:`harnessdrive.mining.envsetup` and one folder per environment
(``python-<key>``, ``node-<key>``). A mined task's setup command runs that copy in each fresh
copy, which links the environment whose key matches the copy's manifests. Mining builds every
environment a candidate needs before the grader runs, in the sandbox, from a prototype copy of
the commit in question; a build that fails is remembered, so no other candidate waits for it.
"""

from __future__ import annotations

import re
import shlex
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.mining import envbuild, envkeys, envlink, envsetup, envstore, pymanifests
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import Isolation, Sandbox

SCRIPT_NAME = "envsetup.py"
# The setup script and the standard-library modules it imports, kept side by side.
_SCRIPT_FILES = tuple(
    Path(module.__file__ or "")
    for module in (envsetup, envkeys, envbuild, envstore, envlink, pymanifests)
)
BUILD_TIMEOUT = 1800.0
_VENV_PATH = re.compile(r"(^|[\s'\"=;&|(])\.venv/")
_NODE_COMMAND = re.compile(r"(^|[\s;&|(])(npm|npx|pnpm|yarn|bun|node)\b|node_modules/")
_PYTEST = re.compile(r"(^|[\s/])(py\.?test|-m\s+pytest)\b")

VENV_PYTHON = ".venv/bin/python"


@dataclass(frozen=True)
class EnvironmentNeeds:
    """The shared environments a test command relies on."""

    python: bool = False
    pytest: bool = False
    """Make sure pytest is in the Python environment even when no manifest names it."""
    node: bool = False
    choice: envkeys.Choice = envkeys.DEFAULT_CHOICE
    """The extras and dependency groups the Python environment installs (``--extras``)."""

    @property
    def any(self) -> bool:
        return self.python or self.node

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(k for k, wanted in (("python", self.python), ("node", self.node)) if wanted)

    def flags(self, kind: str | None = None) -> list[str]:
        flags = []
        if self.python and kind in (None, "python"):
            flags.append("--python")
            if self.pytest:
                flags.append("--pytest")
            flags += self.choice.flags()
        if self.node and kind in (None, "node"):
            flags.append("--node")
        return flags


def needs_for(
    test_command: str,
    setup_command: str | None,
    choice: envkeys.Choice = envkeys.DEFAULT_CHOICE,
) -> EnvironmentNeeds:
    """Shared environments are made only when no setup command is given (it wins) and the test
    command uses them: a ``.venv/`` path for Python, a Node tool for ``node_modules``."""
    if setup_command:
        return EnvironmentNeeds()
    python = _VENV_PATH.search(test_command) is not None
    return EnvironmentNeeds(
        python=python,
        pytest=python and _PYTEST.search(test_command) is not None,
        node=_NODE_COMMAND.search(test_command) is not None,
        choice=choice,
    )


def python_test_command(detected: str) -> str:
    """The detected pytest command, run with the copy's own environment instead of python3 or
    ``uv run`` (which would sync an environment, from the network, in every copy; the shared
    environment holds what uv.lock pins)."""
    for start in ("python3 -m pytest", "uv run pytest"):
        if detected.startswith(start):
            return VENV_PYTHON + " -m pytest" + detected[len(start) :]
    return detected


@dataclass(frozen=True)
class PrepareOutcome:
    ok: bool
    keys: tuple[str, ...] = ()
    """``kind-key`` of each environment the copy uses."""
    built: tuple[str, ...] = ()
    error: str | None = None
    log: Path | None = None


class EnvironmentStore:
    """The environments of one suite: built on demand, each at most once (thread-safe)."""

    def __init__(
        self,
        root: Path,
        needs: EnvironmentNeeds,
        *,
        sandbox: Sandbox,
        python: str,
        reuse: bool = True,
        timeout: float = BUILD_TIMEOUT,
        stop: StopToken | None = None,
    ) -> None:
        """``reuse=False``: every copy builds its own environment in place (for comparison)."""
        self.root = root
        self.needs = needs
        self.sandbox = sandbox
        self.python = python
        self.reuse = reuse
        self.timeout = timeout
        self.stop = stop
        self.built: list[str] = []
        """Environments built by this store, in order."""
        self.reused = 0
        """Copies that found their environment already built."""
        self._failed: dict[str, Path] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        if needs.any:
            self.root.mkdir(parents=True, exist_ok=True)
            for source in _SCRIPT_FILES:
                script = source.read_bytes()
                target = self.root / source.name
                if not target.is_file() or target.read_bytes() != script:
                    target.write_bytes(script)

    @property
    def script(self) -> Path:
        return self.root / SCRIPT_NAME

    def setup_command(self) -> str | None:
        """The setup command of every mined task; None when no environment is needed."""
        if not self.needs.any:
            return None
        mode = "link" if self.reuse else "fresh"
        flags = " ".join(shlex.quote(flag) for flag in self.needs.flags())
        return f"{{python}} {shlex.quote(str(self.script))} {mode} {flags}"

    def keys(self, root: Path) -> list[tuple[str, str]]:
        found = []
        for kind in self.needs.kinds:
            key = envkeys.environment_key(
                root, kind, pytest=self.needs.pytest, choice=self.needs.choice
            )
            if key is not None:
                found.append((kind, key))
        return found

    def prepare(self, files: Path, prototype: Callable[[], Path], logs: Path) -> PrepareOutcome:
        """Make sure the store holds every environment the files in ``files`` need.

        ``prototype`` makes a throwaway copy of those files, only when something must be built
        (building writes into it).
        """
        if not self.reuse or not self.needs.any:
            return PrepareOutcome(ok=True)
        names: list[str] = []
        built: list[str] = []
        made: list[Path] = []

        def copy() -> Path:
            if not made:
                made.append(prototype())
            return made[0]

        for kind, key in self.keys(files):
            name = f"{kind}-{key}"
            names.append(name)
            with self._lock(name):
                if name in self._failed:
                    log = self._failed[name]
                    return PrepareOutcome(False, tuple(names), tuple(built), _failed(name), log)
                folder = envkeys.environment_folder(self.root, kind, key)
                if envkeys.is_ready(folder):
                    with self._guard:
                        self.reused += 1
                    continue
                log = logs / f"env-{name}.log"
                if not self._build(copy(), kind, log):
                    self._failed[name] = log
                    return PrepareOutcome(False, tuple(names), tuple(built), _failed(name), log)
                built.append(name)
                with self._guard:
                    self.built.append(name)
        return PrepareOutcome(True, tuple(names), tuple(built))

    def prune(self, keep: set[str]) -> list[str]:
        """Delete environments no kept task uses; returns their names."""
        removed = []
        for folder in sorted(self.root.iterdir()):
            ours = folder.is_dir() and folder.name.split("-", 1)[0] in envkeys.KINDS
            if ours and folder.name not in keep:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder.name)
        return removed

    def _lock(self, name: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(name, threading.Lock())

    def _build(self, prototype: Path, kind: str, log: Path) -> bool:
        log.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="harnessdrive-env-") as scratch:
            home, tmp = Path(scratch) / "home", Path(scratch) / "tmp"
            home.mkdir()
            tmp.mkdir()
            argv = [self.python, str(self.script), "build", *self.needs.flags(kind)]
            with log.open("ab") as handle:
                handle.write(f"$ {shlex.join(argv)}\n".encode())
            result = self.sandbox.run(
                argv,
                cwd=prototype,
                env=base_environment(home, tmp),
                timeout=self.timeout,
                stdout=log,
                stderr=log,
                # Installing dependencies is the one step that may need the network.
                isolation=Isolation(writable=(prototype, self.root, home, tmp), network="host"),
                stop=self.stop,
            )
        return result.ok


def _failed(name: str) -> str:
    return f"the environment {name} could not be built"
