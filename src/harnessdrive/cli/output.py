"""Where the command line writes: rich on a terminal, plain text otherwise."""

from __future__ import annotations

import os
from collections.abc import Mapping

from rich.console import Console


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # Rich would exit 1 here, which our commands use for "a harness never ran": the command
        # line's own handler says that the reader went away instead (cli/app.py).
        self.quiet = True
        raise BrokenPipeError


PIPED_WIDTH = 120
"""The width of output to a pipe or a log when ``COLUMNS`` does not say."""


def stdout() -> Console:
    """Rich on a terminal; plain ASCII for pipes and logs, its tables as wide as ``COLUMNS``
    says (else 120) and its sentences never wrapped (a reader of a log greps whole lines)."""
    console = _Console(highlight=False)
    if not console.is_terminal:
        console = _Console(
            highlight=False,
            width=piped_width(os.environ),
            no_color=True,
            safe_box=True,
            soft_wrap=True,
        )
    return console


def piped_width(environ: Mapping[str, str]) -> int:
    """``COLUMNS`` when it is a sensible width, else ``PIPED_WIDTH``."""
    given = environ.get("COLUMNS", "").strip()
    return int(given) if given.isdigit() and 20 <= int(given) <= 1000 else PIPED_WIDTH


def stderr() -> Console:
    return _Console(stderr=True, highlight=False)
