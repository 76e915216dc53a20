"""``harnessdrive install-clis``."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from harnessdrive.cli.variants import split_names
from harnessdrive.harnesses.cli.install import PINS, InstallError, install_named


def install_clis(
    names: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[NAME ...]",
            help=f"Harnesses whose CLI to install (default: all): {', '.join(PINS)}.",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", metavar="N", help="Installs at once.")] = 3,
) -> None:
    """Install the pinned agent CLIs (npm, PyPI) where harnessdrive looks for them.

    The cache is $HARNESSDRIVE_CLI_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/harnessdrive/clis.
    """
    try:
        done = install_named(split_names(names or []), jobs=max(jobs, 1))
    except InstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(1) from None
    for item in done:
        state = "already installed" if item.seconds == 0.0 else f"installed in {item.seconds:.0f}s"
        print(f"{item.pin.harness} {item.pin.version}: {state}: {item.executable}")
