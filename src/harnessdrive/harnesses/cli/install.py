"""The agent CLIs this harnessdrive is tested with, pinned, and the installer that fetches them.

``harnessdrive install-clis [NAME ...]`` puts each CLI in its own folder of an install cache:
npm packages into an npm prefix, PyPI packages into a venv (with uv where it is installed,
else pip). A stamp file written last marks a finished install of one pinned version, so a
second run is a few stat calls. Only npm and PyPI are used; nothing is fetched at run time.

Where harnessdrive looks for a pinned install (:func:`search_caches`): only
``$HARNESSDRIVE_CLI_CACHE`` when it is set; otherwise the user cache
``${XDG_CACHE_HOME:-~/.cache}/harnessdrive/clis`` (where ``install-clis`` installs) and, when
harnessdrive runs from a source checkout, that checkout's ``.cache/clis`` (where
``scripts/install_clis.sh`` installs).

npm 11 skips dependency install scripts by default (and refuses ``--allow-scripts`` for project
installs), and claude-code and opencode-ai use one to link their platform binary into ``bin/``.
We install with ``--ignore-scripts`` everywhere, so npm 10 and 11 behave alike, and each pin
names the platform binary that ships as an optional dependency of those two.

Stdlib only.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harnessdrive.errors import HarnessdriveError, UserError

CACHE_ENV = "HARNESSDRIVE_CLI_CACHE"
STAMP_NAME = ".harnessdrive-installed.json"


class InstallError(HarnessdriveError):
    """npm, uv or pip failed; the message names the log."""


@dataclass(frozen=True)
class CliPin:
    """One CLI at one version, and where its executable lands inside its install folder."""

    name: str
    registry: Literal["npm", "pypi"]
    package: str
    version: str
    executable: str
    harness: str
    """The harness that runs it (``mini`` is the ``mini-swe-agent`` harness's CLI)."""
    needs_python_below: tuple[int, int] | None = None

    @property
    def folder_name(self) -> str:
        return f"{self.name}-{self.version}"


def _npm_platform() -> str:
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
    return f"{sys.platform}-{machine.get(platform.machine().lower(), platform.machine())}"


_PLATFORM = _npm_platform()

PINS: dict[str, CliPin] = {
    pin.name: pin
    for pin in (
        CliPin(
            "claude",
            "npm",
            "@anthropic-ai/claude-code",
            "2.1.332",
            f"node_modules/@anthropic-ai/claude-code-{_PLATFORM}/claude",
            "claude",
        ),
        CliPin("codex", "npm", "@openai/codex", "0.171.0", "node_modules/.bin/codex", "codex"),
        CliPin(
            "gemini", "npm", "@google/gemini-cli", "0.61.0", "node_modules/.bin/gemini", "gemini"
        ),
        CliPin(
            "opencode",
            "npm",
            "opencode-ai",
            "1.18.33",
            f"node_modules/opencode-{_PLATFORM}/bin/opencode",
            "opencode",
        ),
        CliPin(
            "pi", "npm", "@mariozechner/pi-coding-agent", "0.73.1", "node_modules/.bin/pi", "pi"
        ),
        CliPin("qwen", "npm", "@qwen-code/qwen-code", "0.24.4", "node_modules/.bin/qwen", "qwen"),
        CliPin(
            "aider",
            "pypi",
            "aider-chat",
            "0.86.2",
            "venv/bin/aider",
            "aider",
            needs_python_below=(3, 13),
        ),
        CliPin("mini", "pypi", "mini-swe-agent", "2.4.6", "venv/bin/mini", "mini-swe-agent"),
    )
}


def pin_named(name: str) -> CliPin:
    """A pin by its own name or its harness's name; :class:`UserError` for any other name."""
    for pin in PINS.values():
        if name in (pin.name, pin.harness):
            return pin
    known = ", ".join(pin.harness for pin in PINS.values())
    raise UserError(f"no pinned CLI {name!r}; install-clis knows: {known}")


def pin_of_harness(harness: str) -> CliPin | None:
    return next((pin for pin in PINS.values() if pin.harness == harness), None)


def install_command(harness: str) -> str:
    """The command that installs a harness's pinned CLI, for fix hints."""
    pin = pin_of_harness(harness)
    return f"harnessdrive install-clis {pin.harness}" if pin else ""


# Where installs live -----------------------------------------------------------------------


def user_cache(env: Mapping[str, str] | None = None) -> Path:
    source = os.environ if env is None else env
    base = source.get("XDG_CACHE_HOME") or os.path.join(
        source.get("HOME") or os.path.expanduser("~"), ".cache"
    )
    return Path(base) / "harnessdrive" / "clis"


def checkout_cache() -> Path | None:
    """``<checkout>/.cache/clis`` when harnessdrive runs from a source checkout, else None."""
    package = Path(__file__).resolve().parents[2]  # .../src/harnessdrive
    root = package.parent.parent
    if package.parent.name == "src" and (root / "pyproject.toml").is_file():
        return root / ".cache" / "clis"
    return None


def install_cache(env: Mapping[str, str] | None = None) -> Path:
    """Where ``install-clis`` installs: ``$HARNESSDRIVE_CLI_CACHE``, else the user cache."""
    source = os.environ if env is None else env
    override = source.get(CACHE_ENV)
    return Path(override).expanduser() if override else user_cache(source)


def search_caches(env: Mapping[str, str] | None = None) -> list[Path]:
    """Every cache harnessdrive looks in for a pinned CLI, in order (see the module notes)."""
    source = os.environ if env is None else env
    if source.get(CACHE_ENV):
        return [install_cache(source)]
    caches = [user_cache(source)]
    checkout = checkout_cache()
    if checkout is not None:
        caches.append(checkout)
    return list(dict.fromkeys(caches))


def installed_binary(pin: CliPin, cache: Path) -> Path | None:
    """The executable of a finished install of exactly this pin in ``cache``, else None."""
    folder = cache / pin.folder_name
    try:
        recorded = json.loads((folder / STAMP_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(recorded, dict):
        return None
    if recorded.get("package") != pin.package or recorded.get("version") != pin.version:
        return None
    path = folder / pin.executable
    return path if path.exists() else None


def find_installed(harness: str, env: Mapping[str, str] | None = None) -> Path | None:
    """The pinned CLI of a harness in the first cache that holds it."""
    pin = pin_of_harness(harness)
    if pin is None:
        return None
    for cache in search_caches(env):
        found = installed_binary(pin, cache)
        if found is not None:
            return found
    return None


# Installing --------------------------------------------------------------------------------


def install(pins: Iterable[CliPin], cache: Path, jobs: int = 3) -> dict[str, float]:
    """Install each pin into ``cache`` unless already stamped there; seconds per pin (0: was)."""
    # The Python CLIs first: each builds a virtual environment, the longest installs, so they
    # must not wait behind the npm ones.
    wanted = sorted(pins, key=lambda pin: pin.registry == "npm")
    cache.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        seconds = pool.map(lambda pin: _install_one(pin, cache), wanted)
        return dict(zip((p.name for p in wanted), seconds, strict=True))


def _install_one(pin: CliPin, cache: Path) -> float:
    if installed_binary(pin, cache) is not None:
        return 0.0
    started = time.monotonic()
    target = cache / pin.folder_name
    # A folder without a stamp is a broken earlier attempt; venvs cannot be moved, so start over.
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    log = target / "install.log"
    if pin.registry == "npm":
        _install_npm(pin, target, log)
    else:
        _install_pypi(pin, target, log, _uv())
    if not (target / pin.executable).exists():
        raise InstallError(
            f"{pin.package}@{pin.version} installed but {pin.executable} is missing (see {log})"
        )
    stamp = {"package": pin.package, "version": pin.version, "installed_at": time.time()}
    (target / STAMP_NAME).write_text(json.dumps(stamp) + "\n", encoding="utf-8")
    return time.monotonic() - started


def _install_npm(pin: CliPin, target: Path, log: Path) -> None:
    if shutil.which("npm") is None:
        raise UserError(f"installing {pin.name} needs npm (Node.js 20 or newer); install it first")
    command = [
        "npm",
        "install",
        "--prefix",
        str(target),
        "--no-save",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--loglevel=error",
        f"{pin.package}@{pin.version}",
    ]
    _run(command, log)
    if pin.name == "qwen":
        _make_vendored_ripgrep_executable(target)


def _make_vendored_ripgrep_executable(target: Path) -> None:
    # qwen-code packs its vendored rg binaries with mode 644 and then fails with EACCES.
    for rg in (target / "node_modules" / "@qwen-code" / "qwen-code").rglob("rg"):
        if rg.is_file():
            rg.chmod(rg.stat().st_mode | 0o111)


def _install_pypi(pin: CliPin, target: Path, log: Path, uv: str | None) -> None:
    python = _python_for(pin)
    venv = target / "venv"
    requirement = f"{pin.package}=={pin.version}"
    if uv is not None:
        # uv resolves, downloads and compiles in parallel: a minute of pip is seconds. It does
        # not read pip's configuration, so where it fails pip gets its turn.
        try:
            _run([uv, "venv", "--quiet", "--python", python, str(venv)], log)
            venv_python = str(venv / "bin" / "python")
            _run([uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", venv_python,
                  requirement], log)  # fmt: skip
            return
        except InstallError:
            shutil.rmtree(venv, ignore_errors=True)
    _run([python, "-m", "venv", str(venv)], log)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    _run([*pip, "--disable-pip-version-check", requirement], log)


def _uv() -> str | None:
    """uv beside this interpreter (installed into the same environment), else on PATH."""
    beside = Path(sys.executable).parent / "uv"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("uv")


def _python_for(pin: CliPin) -> str:
    ceiling = pin.needs_python_below
    if ceiling is None or sys.version_info[:2] < ceiling:
        return sys.executable
    for minor in range(ceiling[1] - 1, 9, -1):
        found = shutil.which(f"python3.{minor}")
        if found:
            return found
    raise UserError(f"{pin.package} needs Python below {ceiling[0]}.{ceiling[1]}; none found")


def _run(command: Sequence[str], log: Path) -> None:
    with log.open("a", encoding="utf-8") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        completed = subprocess.run(
            command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, check=False
        )
    if completed.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        last = tail[-1] if tail else "no output"
        raise InstallError(f"{command[0]} failed ({completed.returncode}): {last} (see {log})")


@dataclass(frozen=True)
class Installed:
    pin: CliPin
    seconds: float
    """0 when it was installed already."""
    executable: Path


def install_named(names: Sequence[str], jobs: int = 3) -> list[Installed]:
    """Install the named CLIs (every pin when empty) where harnessdrive will find them."""
    pins = list(dict.fromkeys(pin_named(name) for name in names)) or list(PINS.values())
    cache = install_cache()
    timings = install(pins, cache, jobs=jobs)
    return [
        Installed(pin, timings[pin.name], cache / pin.folder_name / pin.executable) for pin in pins
    ]
