"""Report renderers by name: ``harnessdrive report --format NAME`` finds one through the
``harnessdrive_reporters`` hook (the built-ins are in :mod:`harnessdrive.report.builtin`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.console import RenderableType

from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.plugins.registry import registrations
from harnessdrive.report.scoreboard import Report

HOOK = "harnessdrive_reporters"


@dataclass(frozen=True)
class Reporter:
    """One way to show a loaded report."""

    name: str
    """The ``--format`` value that selects it: ``text``, ``json``, ..."""
    render: Callable[[Report], RenderableType]
    """The report as text (written as it is) or a rich renderable (laid out for the terminal,
    plain in a pipe)."""
    description: str = ""
    """One line for ``--help`` and listings."""
    details: bool = False
    """Whether it shows each trial's drill-down (diff, test output, transcript excerpt), which
    the report then reads from the trial folders."""
    default_file: str | None = None
    """A file in the results folder it is written to unless ``--output`` names another (a
    page, say); None: printed."""


def reporters() -> dict[str, Reporter]:
    """Every registered reporter, by name (built-ins first)."""
    return registrations(HOOK, Reporter)


def reporter(name: str) -> Reporter:
    """The reporter called ``name``; an unknown one is a one-line UserError."""
    found = reporters()
    if name not in found:
        raise UserError(
            f"unknown report format {name!r}{did_you_mean(name, found)}; known formats: "
            f"{', '.join(found)}"
        )
    return found[name]
