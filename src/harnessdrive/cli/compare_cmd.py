"""``harnessdrive compare A B``."""

from __future__ import annotations

from typing import Annotated

import typer

from harnessdrive.cli import options as opt
from harnessdrive.cli.output import stdout
from harnessdrive.report.compare import compare_arms, render_comparison
from harnessdrive.stats import MIN_PAIRED_TASKS
from harnessdrive.workspace.names import model_json


def compare(
    first: Annotated[str, typer.Argument(metavar="A", help="An arm (variant) name.")],
    second: Annotated[str, typer.Argument(metavar="B", help="The arm to compare it with.")],
    run: Annotated[
        list[str] | None,
        typer.Option(
            "--run", metavar="ID", help="Only this run (an id or its prefix); repeatable."
        ),
    ] = None,
    results: opt.ResultsOption = opt.DEFAULT_RESULTS,
    min_tasks: Annotated[
        int,
        typer.Option("--min-tasks", metavar="N", help="Paired tasks a verdict needs."),
    ] = MIN_PAIRED_TASKS,
    seed: Annotated[int, typer.Option("--seed", help="The bootstrap's seed.")] = 0,
    resamples: Annotated[
        int, typer.Option("--resamples", metavar="N", help="Bootstrap resamples.")
    ] = 2000,
    confidence: Annotated[
        float, typer.Option("--confidence", metavar="LEVEL", help="Interval level.")
    ] = 0.95,
    json_output: opt.JsonOption = False,
) -> None:
    """Compare two arms paired by task: the table, the interval, the test and the verdict."""
    found = compare_arms(
        results,
        first,
        second,
        runs=run or (),
        min_tasks=min_tasks,
        seed=seed,
        resamples=resamples,
        confidence=confidence,
    )
    if json_output:
        print(model_json(found))
    else:
        stdout().print(render_comparison(found))
