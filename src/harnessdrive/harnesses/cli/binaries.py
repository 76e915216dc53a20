"""Finding an agent CLI's executable, its version, its ``--help``, and the folders it runs from.

The executable is looked for in this order: the variant's ``binary`` option, the environment
variable ``HARNESSDRIVE_<NAME>_BINARY``, the pinned install of ``harnessdrive install-clis``
(:mod:`harnessdrive.harnesses.cli.install`), then PATH. Version and help probes run with a throwaway
HOME (some CLIs create their config folder on any invocation) and are cached per executable file,
so asking again in every trial costs a stat call.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harnessdrive.harnesses.cli.install import find_installed
from harnessdrive.sandbox.mounts import prefix_folders, tool_root, venv_root

_PROBE_TIMEOUT = 60.0
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-+][0-9A-Za-z.]+)?")
# Folders every sandbox already shows read-only; an install under them needs no extra binding.
_SYSTEM_PREFIXES = (
    Path("/usr"),
    Path("/bin"),
    Path("/sbin"),
    Path("/lib"),
    Path("/lib32"),
    Path("/lib64"),
    Path("/etc"),
)


def binary_variable(harness: str) -> str:
    """``claude`` -> ``HARNESSDRIVE_CLAUDE_BINARY``."""
    return "HARNESSDRIVE_" + re.sub(r"[^A-Za-z0-9]", "_", harness).upper() + "_BINARY"


@dataclass(frozen=True)
class Located:
    path: Path | None
    """The executable, or None when it was not found."""
    how: str
    """Where it was found or looked for, for messages: ``PATH``, ``$HARNESSDRIVE_X_BINARY``,
    the variant's option, or :data:`PINNED`."""


PINNED = "the pinned install (harnessdrive install-clis)"


def locate(
    names: Sequence[str], harness: str, explicit: str | None, env: dict[str, str] | None = None
) -> Located:
    """The executable of a CLI: the ``binary`` option, the variable, the pinned install, PATH."""
    source = os.environ if env is None else env
    if explicit:
        return Located(_resolve_command(explicit, source), "the variant's 'binary' option")
    variable = binary_variable(harness)
    if source.get(variable):
        return Located(_resolve_command(source[variable], source), f"${variable}")
    pinned = find_installed(harness, source)
    if pinned is not None:
        return Located(pinned, PINNED)
    for name in names:
        found = shutil.which(name, path=source.get("PATH"))
        if found:
            return Located(Path(found), "PATH")
    return Located(None, "PATH")


def _resolve_command(command: str, env: dict[str, str] | os._Environ[str]) -> Path | None:
    if os.sep in command:
        path = Path(command).expanduser()
        return path if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which(command, path=env.get("PATH"))
    return Path(found) if found else None


@dataclass(frozen=True)
class Probe:
    exit_code: int | None
    stdout: str
    stderr: str = ""

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


_cache: dict[tuple[str, int, int, tuple[str, ...]], Probe] = {}
_cache_lock = threading.Lock()


def probe(binary: Path, args: Sequence[str]) -> Probe:
    """Run ``binary args`` once per executable file and remember the answer."""
    try:
        stat = binary.resolve().stat()
    except OSError as exc:
        return Probe(None, f"{binary}: {exc.strerror or exc}")
    key = (str(binary.resolve()), stat.st_mtime_ns, stat.st_size, tuple(args))
    with _cache_lock:
        if key in _cache:
            return _cache[key]
    result = _run_probe(binary, args)
    with _cache_lock:
        _cache[key] = result
    return result


def _run_probe(binary: Path, args: Sequence[str]) -> Probe:
    with tempfile.TemporaryDirectory(prefix="harnessdrive-probe-") as home:
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "LANG": "C.UTF-8",
            "HOME": home,
            "TMPDIR": home,
            "XDG_CONFIG_HOME": home,
            "XDG_DATA_HOME": home,
            "XDG_CACHE_HOME": home,
            "XDG_STATE_HOME": home,
            "NO_COLOR": "1",
            "TERM": "dumb",
            # Wide enough that no flag is cut off in help tables drawn to the terminal width.
            "COLUMNS": "400",
        }
        try:
            done = subprocess.run(
                [str(binary), *args],
                cwd=home,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=_PROBE_TIMEOUT,
                check=False,
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            return Probe(None, f"{binary} {' '.join(args)} did not answer in {_PROBE_TIMEOUT:g}s")
        except OSError as exc:
            return Probe(None, f"{binary}: {exc.strerror or exc}")
    return Probe(done.returncode, done.stdout or "", done.stderr or "")


def parse_version(found: Probe) -> str | None:
    """The first version number the CLI printed (``codex-cli 0.171.0`` -> ``0.171.0``).

    stdout first: some CLIs print warnings with paths in them on stderr.
    """
    for text in (found.stdout, found.stderr):
        match = _VERSION.search(text)
        if match:
            return match.group(0)
    return None


def install_roots(binary: Path) -> tuple[Path, ...]:
    """Folders the CLI needs to read besides the system: its install and its interpreter.

    An npm CLI needs its ``node_modules`` folder, a Python CLI its venv and the Python the venv
    was made from, a lone executable in a ``bin`` folder that folder and its prefix's library
    folders (never the prefix itself, which may hold anything). Folders under /usr and the like
    are left out; every sandbox shows them.
    """
    resolved = binary.resolve()
    roots: list[Path] = []
    if binary.absolute() != resolved:
        # Also where it is named: links inside it resolve from there (``node_modules/.bin``).
        roots += _install_root(binary.absolute())
    roots += _install_root(resolved)
    interpreter = _shebang_interpreter(resolved)
    if interpreter is not None:
        roots += _install_root(interpreter)
    venv = _venv_root(resolved)
    if venv is not None:
        base = _venv_base(venv)
        if base is not None:
            roots += [Path(p) for p in prefix_folders(base)]
    return tuple(dict.fromkeys(p for p in roots if not _is_system(p) and p.is_dir()))


def _install_root(path: Path) -> list[Path]:
    return [Path(p) for p in tool_root(path)]


def _venv_root(path: Path) -> Path | None:
    found = venv_root(path)
    return Path(found) if found is not None else None


def _venv_base(venv: Path) -> Path | None:
    try:
        lines = (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            return Path(value.strip()).resolve()
    return None


def _shebang_interpreter(path: Path) -> Path | None:
    try:
        with path.open("rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode(errors="replace").split()
    if not words:
        return None
    command = words[1] if Path(words[0]).name == "env" and len(words) > 1 else words[0]
    found = shutil.which(command) if os.sep not in command else command
    return Path(found).resolve() if found else None


def _is_system(path: Path) -> bool:
    return any(path == prefix or prefix in path.parents for prefix in _SYSTEM_PREFIXES)


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def unique(paths: Iterable[Path]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(paths))
