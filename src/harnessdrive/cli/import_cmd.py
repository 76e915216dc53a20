"""``harnessdrive import harbor PATH``: other formats' tasks written as a suite."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harnessdrive.cli.output import stdout
from harnessdrive.errors import UserError
from harnessdrive.harbor.importer import ImportOptions, import_harbor

import_app = typer.Typer(help="Import tasks written for other tools as a suite.")


def image_map(pairs: list[str]) -> dict[str, str]:
    images = {}
    for pair in pairs:
        name, sep, source = pair.partition("=")
        if not sep or not name or not source:
            raise UserError(f"an image mapping is NAME=IMAGE, not {pair!r}")
        images[name] = source
    return images


@import_app.command("harbor")
def harbor(
    path: Annotated[
        Path, typer.Argument(help="A Harbor task folder, dataset folder or dataset.toml.")
    ],
    out: Annotated[Path, typer.Option("--out", help="The suite folder to write.")],
    image: Annotated[
        list[str],
        typer.Option(
            "--image",
            help="NAME=IMAGE: run the tasks' image NAME from IMAGE (an OCI layout oci:PATH:TAG, "
            "a docker save archive, a registry reference). Repeatable.",
        ),
    ] = [],  # noqa: B006 - typer reads the default
    threshold: Annotated[
        float | None, typer.Option("--threshold", help="The reward that passes (default 1.0).")
    ] = None,
    no_reference: Annotated[
        bool, typer.Option("--no-reference", help="Do not run solve.sh to make references.")
    ] = False,
) -> None:
    """Write Harbor tasks as a harnessdrive suite; a task that cannot be imported is one line."""
    options = ImportOptions(
        images=image_map(image), threshold=threshold, reference=not no_reference
    )
    report = import_harbor(path, out, options)
    console = stdout()
    for line in report.refused:
        typer.echo(f"skipped {line}", err=True)
    console.print(f"Imported {len(report.written)} task(s) into {report.suite}")
    if not report.written:
        raise typer.Exit(2)
