"""Shared bits of the command line: consoles, the results folder option, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

DEFAULT_RESULTS = Path(".harnessdrive")

ResultsOption = Annotated[
    Path,
    typer.Option(
        "--results", help="Results folder (default: .harnessdrive/ here).", show_default=False
    ),
]


def stdout() -> Console:
    """Rich on a terminal; plain ASCII at a fixed width for pipes and logs."""
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=120, no_color=True, safe_box=True)
    return console


def stderr() -> Console:
    return Console(stderr=True, highlight=False)
