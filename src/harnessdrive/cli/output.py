"""Where the command line writes: rich on a terminal, plain text otherwise."""

from __future__ import annotations

from rich.console import Console


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # Rich would exit 1 here, which our commands use for "a harness never ran": the command
        # line's own handler says that the reader went away instead (cli/app.py).
        self.quiet = True
        raise BrokenPipeError


def stdout() -> Console:
    """Rich on a terminal; plain ASCII at a fixed width for pipes and logs."""
    console = _Console(highlight=False)
    if not console.is_terminal:
        console = _Console(highlight=False, width=140, no_color=True, safe_box=True)
    return console


def stderr() -> Console:
    return _Console(stderr=True, highlight=False)
