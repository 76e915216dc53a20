"""``harnessdrive report`` and ``harnessdrive index``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harnessdrive.cli import options as opt
from harnessdrive.cli.output import stdout
from harnessdrive.cli.trust_options import AllTasksOption, AuditedSuiteOption, audits_now
from harnessdrive.errors import UserError
from harnessdrive.pytest_plugin.session_report import is_session, load_session_report
from harnessdrive.report.loading import View, load_folder_report, load_report
from harnessdrive.report.renderers import reporter
from harnessdrive.report.writing import write_report
from harnessdrive.store.folder import check_for_reading
from harnessdrive.store.store import Store


def report(
    run: Annotated[
        str | None, typer.Argument(help="A run id or its prefix (default: the latest).")
    ] = None,
    results: opt.ResultsOption = opt.DEFAULT_RESULTS,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print JSON (docs/results.md); --format json.")
    ] = False,
    format_name: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="NAME",
            help="How to show it: text (the default), json, or a plugin's format.",
        ),
    ] = "text",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write it to FILE (html: default report.html in the results folder).",
        ),
    ] = None,
    every_run: Annotated[
        bool, typer.Option("--all", help="Every run in the results folder, not one.")
    ] = False,
    accepted_only: Annotated[
        bool, typer.Option("--accepted-only", help="Only passes a person accepted count.")
    ] = False,
    margin: Annotated[
        float | None,
        typer.Option(
            "--margin", metavar="RATE", help="Call arms within this difference equivalent."
        ),
    ] = None,
    confidence: Annotated[
        float, typer.Option("--confidence", metavar="LEVEL", help="1 - the error rate.")
    ] = 0.95,
    all_tasks: AllTasksOption = False,
    suite: AuditedSuiteOption = None,
) -> None:
    """Print the scoreboard of a recorded run again, or write it as a page or JSON."""
    if json_output and format_name not in ("text", "json"):
        raise UserError(f"--json and --format {format_name} ask for two formats; give one")
    if every_run and run is not None:
        raise UserError(f"--all and the run {run!r} ask for two reports; give one")
    if margin is not None and not 0 < margin < 1:
        raise UserError(f"--margin is a difference of rates between 0 and 1, not {margin}")
    if not 0 < confidence < 1:
        raise UserError(f"--confidence must lie between 0 and 1, not {confidence}")
    view = View(
        accepted_only=accepted_only,
        margin=margin,
        confidence=confidence,
        all_tasks=all_tasks,
        suite_trust=audits_now(suite),
    )
    chosen = reporter("json" if json_output else format_name)
    if output is None and chosen.default_file:
        output = results / chosen.default_file
    if is_session(results):  # a pytest session: one store per worker, read together
        if suite is not None:
            raise UserError(f"{results} is a pytest session, whose cases have no audit: no --suite")
        loaded = load_session_report(
            results,
            details=chosen.details,
            margin=margin,
            confidence=confidence,
            accepted_only=accepted_only,
        )
    elif every_run:
        loaded = load_folder_report(results, details=chosen.details, view=view)
    else:
        loaded = load_report(results, run, details=chosen.details, view=view)
    if output is not None:
        write_report(loaded, chosen, results, output)
        return
    shown = chosen.render(loaded)
    if isinstance(shown, str):
        print(shown)
    else:
        stdout().print(shown)


def index(
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Rebuild from the trial folders.")
    ] = False,
    results: opt.ResultsOption = opt.DEFAULT_RESULTS,
) -> None:
    """Check or rebuild the SQLite index of a results folder."""
    check_for_reading(results)
    store = Store(results)
    try:
        if rebuild:
            count = store.rebuild_index()
            stdout().print(f"Rebuilt {store.paths.index}: {count} recorded attempts.")
        else:
            store.sync_index()
            count = int(store.db.execute("SELECT count(*) FROM results").fetchone()[0])
            stdout().print(
                f"{store.paths.index}: {count} recorded attempts, in line with the folders."
            )
    finally:
        store.close()
