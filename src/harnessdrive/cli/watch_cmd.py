"""``harnessdrive watch RESULTS``: follow a running job from another terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from harnessdrive.running.watching import WatchEvent, watch


def watch_results(
    results: Annotated[
        Path, typer.Argument(metavar="RESULTS", help="The results folder a run is writing.")
    ],
    once: Annotated[bool, typer.Option("--once", help="Print what is there now and stop.")] = False,
) -> None:
    """Follow a run's trials as they start and finish, until no run holds the folder."""
    if not results.is_dir():
        print(f"error: no results folder at {results}", file=sys.stderr)
        raise typer.Exit(2)

    def emit(event: WatchEvent) -> None:
        print(event.line(), flush=True)

    try:
        watch(results, emit, once=once)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
