"""A report written to a file: its links to trial folders are made relative to where it lies."""

from __future__ import annotations

import io
import os
from pathlib import Path

from rich.console import Console

from harnessdrive.errors import UserError
from harnessdrive.report.renderers import Reporter
from harnessdrive.report.scoreboard import Report
from harnessdrive.store.atomic import write_atomic


def write_report(report: Report, chosen: Reporter, results: Path, output: Path) -> None:
    """Render ``report`` with ``chosen`` into ``output``, and say where it went."""
    target = output.resolve()
    if target.is_dir():
        raise UserError(f"--output {output} is a folder; name a file")
    if not target.parent.is_dir():
        raise UserError(f"--output {output}: the folder {output.parent} does not exist")
    href = Path(os.path.relpath(results.resolve(), target.parent)).as_posix()
    shown = chosen.render(report.model_copy(update={"results_href": href}))
    if not isinstance(shown, str):
        buffer = io.StringIO()
        Console(file=buffer, width=160, color_system=None).print(shown)
        shown = buffer.getvalue()
    try:
        write_atomic(target, shown if shown.endswith("\n") else shown + "\n")
    except OSError as exc:
        raise UserError(f"cannot write {output}: {exc.strerror or exc}") from None
    print(f"Wrote {output} ({target.stat().st_size:,} bytes)")
