"""Pinned installs of the real agent CLIs, for the `cli` tests.

The pins and the installer are harnessdrive's own (:mod:`harnessdrive.harnesses.cli.install`, what
``harnessdrive install-clis`` runs); this module only picks the tests' cache: the folder named by
``HARNESSDRIVE_CLI_CACHE``, else ``<repo>/.cache/clis`` of the source checkout, which harnessdrive
itself searches too, so the CLIs the tests install are found by ``harnessdrive demo`` as well.

    python -m harnessdrive.testing.clis install [NAME ...]
    python -m harnessdrive.testing.clis path NAME
    python -m harnessdrive.testing.clis list
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from harnessdrive.harnesses.cli import install as pinned
from harnessdrive.harnesses.cli.install import CACHE_ENV, PINS, STAMP_NAME, CliPin

__all__ = [
    "CACHE_ENV",
    "PINS",
    "STAMP_NAME",
    "CliNotInstalledError",
    "CliPin",
    "binary",
    "cache_root",
    "install",
    "install_dir",
    "is_installed",
    "version",
]


class CliNotInstalledError(RuntimeError):
    """The pinned CLI is not in the cache; run the installer first."""


def cache_root() -> Path:
    """The folder holding every installed CLI."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return pinned.checkout_cache() or Path.cwd() / ".cache" / "clis"


def install_dir(name: str) -> Path:
    return cache_root() / _pin(name).folder_name


def is_installed(name: str) -> bool:
    return pinned.installed_binary(_pin(name), cache_root()) is not None


def binary(name: str) -> Path:
    """Path of the installed executable of one CLI; raises if it is not installed."""
    pin = _pin(name)
    path = pinned.installed_binary(pin, cache_root())
    if path is None:
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


def install(names: Iterable[str] | None = None, jobs: int = 4) -> dict[str, float]:
    """Install the named CLIs (all by default) unless already stamped; returns seconds per CLI."""
    wanted = [_pin(n) for n in (names if names is not None else PINS)]
    return pinned.install(wanted, cache_root(), jobs=jobs)


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
    install_cmd.add_argument("--jobs", type=int, default=4)
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
