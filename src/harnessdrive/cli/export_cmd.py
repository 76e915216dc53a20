"""``harnessdrive export harbor|swebench SUITE``: a suite written in other tools' formats."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harnessdrive.cli.output import stdout
from harnessdrive.export.swebench import export_swebench
from harnessdrive.harbor.exporter import DEFAULT_BASE_IMAGE, export_harbor
from harnessdrive.tasks import load_suite

export_app = typer.Typer(help="Write a suite as other tools' tasks.")

BaseImage = Annotated[
    str,
    typer.Option(
        "--base-image", help="The image of tasks that run on the host's system (no image)."
    ),
]


def _refused(lines: list[str]) -> None:
    for line in lines:
        typer.echo(f"skipped {line}", err=True)


@export_app.command("harbor")
def harbor(
    suite: Annotated[Path, typer.Argument(help="The suite folder.")],
    out: Annotated[Path, typer.Option("--out", help="The Harbor dataset folder to write.")],
    base_image: BaseImage = DEFAULT_BASE_IMAGE,
) -> None:
    """Write every task of a suite as a Harbor task (schema 1.4)."""
    report = export_harbor(load_suite(suite), out, base_image=base_image)
    _refused(report.refused)
    stdout().print(f"Exported {len(report.written)} task(s) to {report.folder}")
    if not report.written:
        raise typer.Exit(2)


@export_app.command("swebench")
def swebench(
    suite: Annotated[Path, typer.Argument(help="The suite folder.")],
    out: Annotated[Path, typer.Option("--out", help="The task repository folder to write.")],
    results: Annotated[
        Path | None, typer.Option("--results", help="A results folder: its diffs as predictions.")
    ] = None,
    arm: Annotated[
        str | None, typer.Option("--arm", help="Only this variant's diffs (its label).")
    ] = None,
    base_image: BaseImage = DEFAULT_BASE_IMAGE,
) -> None:
    """Write a SWE-bench 5.0 task repository (and predictions.jsonl from a run's diffs)."""
    report = export_swebench(
        load_suite(suite), out, results=results, variant=arm, base_image=base_image
    )
    _refused(report.refused)
    stdout().print(
        f"Exported {len(report.written)} instance(s) and {report.predictions} prediction(s) "
        f"to {report.folder}"
    )
    if not report.written:
        raise typer.Exit(2)
