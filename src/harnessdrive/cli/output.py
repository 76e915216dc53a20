"""Where the command line writes: rich on a terminal, plain text otherwise."""

from __future__ import annotations

from rich.console import Console


def stdout() -> Console:
    """Rich on a terminal; plain ASCII at a fixed width for pipes and logs."""
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=140, no_color=True, safe_box=True)
    return console


def stderr() -> Console:
    return Console(stderr=True, highlight=False)
