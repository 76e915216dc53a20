"""``harnessdrive harnesses``, ``doctor`` and ``schema``."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from pydantic import BaseModel
from rich.table import Table

from harnessdrive.accounting.run_estimate import Estimate
from harnessdrive.cli.doctor import check_tools, harness_infos
from harnessdrive.cli.output import stdout
from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.harnesses.schema import with_harness_options
from harnessdrive.report.scoreboard import Report
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.grade_kinds import published_task_model
from harnessdrive.tasks.models import SuiteSpec, TaskSpec
from harnessdrive.tasks.schema import json_schema

SCHEMAS: dict[str, type[BaseModel]] = {
    "task": TaskSpec,
    "suite": SuiteSpec,
    "result": TrialResult,
    "report": Report,
    "estimate": Estimate,
}


def harnesses() -> None:
    """List every harness: installed or not, version, what it supports."""
    stdout().print(_harness_table())


def doctor() -> None:
    """Check git, python, bubblewrap and every harness CLI."""
    table = Table(title="Tools", title_justify="left")
    for column in ("Tool", "OK", "Detail"):
        table.add_column(column)
    checks = check_tools()
    for item in checks:
        table.add_row(
            item.name, "yes" if item.ok else ("NO" if item.required else "no"), item.detail
        )
    console = stdout()
    console.print(table)
    console.print(_harness_table())
    if any(not item.ok and item.required for item in checks):
        raise typer.Exit(1)


def schema(
    kind: Annotated[str, typer.Argument(help="task | suite | result | report | estimate")],
) -> None:
    """Print the JSON Schema of a file format."""
    model = published_task_model() if kind == "task" else SCHEMAS.get(kind)
    if model is None:
        raise UserError(
            f"unknown schema {kind!r}{did_you_mean(kind, SCHEMAS)}; choose one of "
            f"{', '.join(SCHEMAS)}"
        )
    print(json.dumps(with_harness_options(json_schema(model)), indent=2))


def _harness_table() -> Table:
    table = Table(title="Harnesses", title_justify="left")
    for column in ("Harness", "From", "Installed", "Version", "Found", "Detail"):
        table.add_column(column)
    for info in harness_infos():
        table.add_row(
            info.name,
            info.origin or "-",
            "yes" if info.installed else "no",
            info.version or "-",
            info.found or "-",
            info.detail,
        )
    return table
