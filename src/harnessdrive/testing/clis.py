"""Pinned installs of the real agent CLIs, for the `cli` tests.

Each CLI goes into its own folder under the cache (default `<repo>/.cache/clis/`, or the folder
named by `HARNESSDRIVE_CLI_CACHE`): npm packages into an npm prefix, PyPI packages into a venv.
A stamp file written last marks a finished install of one pinned version, so a second run is a
few stat calls. Only npm and PyPI are used; nothing is fetched at run time.

npm 11 skips dependency install scripts by default (and refuses `--allow-scripts` for project
installs), and claude-code and opencode-ai use one to link their platform binary into `bin/`.
We install with `--ignore-scripts` everywhere, so npm 10 and 11 behave alike, and `binary()`
points at the platform binary that ships as an optional dependency of those two.

Stdlib only, so `scripts/install_clis.sh` can run it before the project's venv exists.

    python -m harnessdrive.testing.clis install [NAME ...]
    python -m harnessdrive.testing.clis path NAME
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

CACHE_ENV = "HARNESSDRIVE_CLI_CACHE"
STAMP_NAME = ".harnessdrive-installed.json"


@dataclass(frozen=True)
class CliPin:
    """One CLI at one version, and where its executable lands inside its install folder."""

    name: str
    registry: Literal["npm", "pypi"]
    package: str
    version: str
    executable: str
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
        ),
        CliPin("codex", "npm", "@openai/codex", "0.171.0", "node_modules/.bin/codex"),
        CliPin("gemini", "npm", "@google/gemini-cli", "0.61.0", "node_modules/.bin/gemini"),
        CliPin(
            "opencode",
            "npm",
            "opencode-ai",
            "1.18.33",
            f"node_modules/opencode-{_PLATFORM}/bin/opencode",
        ),
        CliPin("pi", "npm", "@mariozechner/pi-coding-agent", "0.73.1", "node_modules/.bin/pi"),
        CliPin("qwen", "npm", "@qwen-code/qwen-code", "0.24.4", "node_modules/.bin/qwen"),
        CliPin(
            "aider", "pypi", "aider-chat", "0.86.2", "venv/bin/aider", needs_python_below=(3, 13)
        ),
        CliPin("mini", "pypi", "mini-swe-agent", "2.4.6", "venv/bin/mini"),
    )
}


class CliNotInstalledError(RuntimeError):
    """The pinned CLI is not in the cache; run the installer first."""


def cache_root() -> Path:
    """The folder holding every installed CLI."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return _repo_root() / ".cache" / "clis"


def _repo_root() -> Path:
    # An editable install keeps this file under <repo>/src/harnessdrive/testing/.
    for parent in Path(__file__).resolve().parents:
        if (parent / "pyproject.toml").is_file() and (parent / "src" / "harnessdrive").is_dir():
            return parent
    return Path.cwd()


def install_dir(name: str) -> Path:
    return cache_root() / _pin(name).folder_name


def is_installed(name: str) -> bool:
    pin = _pin(name)
    stamp = install_dir(name) / STAMP_NAME
    if not stamp.is_file():
        return False
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(recorded.get("package") == pin.package and recorded.get("version") == pin.version)


def binary(name: str) -> Path:
    """Path of the installed executable of one CLI; raises if it is not installed."""
    pin = _pin(name)
    path = install_dir(name) / pin.executable
    if not is_installed(name) or not path.exists():
        raise CliNotInstalledError(
            f"{pin.package}@{pin.version} is not installed under {cache_root()}; "
            "run scripts/install_clis.sh"
        )
    return path


def version(name: str) -> str:
    return _pin(name).version


def _pin(name: str) -> CliPin:
    try:
        return PINS[name]
    except KeyError:
        raise KeyError(f"unknown CLI {name!r}; known: {', '.join(PINS)}") from None


def install(names: Iterable[str] | None = None, jobs: int = 3) -> dict[str, float]:
    """Install the named CLIs (all by default) unless already stamped; returns seconds per CLI."""
    wanted = [_pin(n) for n in (names if names is not None else PINS)]
    cache_root().mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        timings = dict(zip((p.name for p in wanted), pool.map(_install_one, wanted), strict=True))
    return timings


def _install_one(pin: CliPin) -> float:
    if is_installed(pin.name):
        return 0.0
    started = time.monotonic()
    target = install_dir(pin.name)
    # A folder without a stamp is a broken earlier attempt; venvs cannot be moved, so start over.
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    log = target / "install.log"
    if pin.registry == "npm":
        _install_npm(pin, target, log)
    else:
        _install_pypi(pin, target, log)
    if not (target / pin.executable).exists():
        raise RuntimeError(f"{pin.package}@{pin.version} installed but {pin.executable} is missing")
    stamp = {"package": pin.package, "version": pin.version, "installed_at": time.time()}
    (target / STAMP_NAME).write_text(json.dumps(stamp) + "\n", encoding="utf-8")
    return time.monotonic() - started


def _install_npm(pin: CliPin, target: Path, log: Path) -> None:
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


def _install_pypi(pin: CliPin, target: Path, log: Path) -> None:
    python = _python_for(pin)
    venv = target / "venv"
    _run([python, "-m", "venv", str(venv)], log)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    _run([*pip, "--disable-pip-version-check", f"{pin.package}=={pin.version}"], log)


def _python_for(pin: CliPin) -> str:
    ceiling = pin.needs_python_below
    if ceiling is None or sys.version_info[:2] < ceiling:
        return sys.executable
    for minor in range(ceiling[1] - 1, 9, -1):
        found = shutil.which(f"python3.{minor}")
        if found:
            return found
    raise RuntimeError(f"{pin.package} needs Python below {ceiling[0]}.{ceiling[1]}; none found")


def _run(command: Sequence[str], log: Path) -> None:
    with log.open("a", encoding="utf-8") as out:
        out.write("$ " + " ".join(command) + "\n")
        out.flush()
        completed = subprocess.run(
            command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, check=False
        )
    if completed.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
        raise RuntimeError(f"{' '.join(command)} failed ({completed.returncode}):\n{tail}")


def _disk_usage(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for file in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, file)).st_size
    return total


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harnessdrive.testing.clis")
    commands = parser.add_subparsers(dest="command", required=True)
    install_cmd = commands.add_parser("install", help="install pinned CLIs (all by default)")
    install_cmd.add_argument("names", nargs="*", help=f"any of: {', '.join(PINS)}")
    install_cmd.add_argument("--jobs", type=int, default=3)
    path_cmd = commands.add_parser("path", help="print the executable of one CLI")
    path_cmd.add_argument("name", choices=list(PINS))
    commands.add_parser("list", help="show each pin, whether installed, and its size")
    args = parser.parse_args(argv)

    if args.command == "install":
        timings = install(args.names or None, jobs=args.jobs)
        for name, seconds in timings.items():
            state = "already installed" if seconds == 0.0 else f"installed in {seconds:.1f}s"
            print(f"{name} {PINS[name].version}: {state}")
        return 0
    if args.command == "path":
        print(binary(args.name))
        return 0
    for name, pin in PINS.items():
        folder = install_dir(name)
        size = f"{_disk_usage(folder) / 1e6:.0f} MB" if folder.exists() else "-"
        state = "installed" if is_installed(name) else "missing"
        print(f"{name:9} {pin.package}@{pin.version:10} {state:9} {size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
