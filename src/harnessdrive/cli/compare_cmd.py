"""``harnessdrive compare A B``, and ``compare A --baseline EARLIER`` across two results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harnessdrive.cli import options as opt
from harnessdrive.cli.output import stdout
from harnessdrive.cli.trust_options import AllTasksOption, AuditedSuiteOption, audits_now
from harnessdrive.errors import UserError
from harnessdrive.report.baseline import compare_to_baseline
from harnessdrive.report.compare import compare_arms, render_comparison
from harnessdrive.stats.decisions import MIN_TASKS
from harnessdrive.workspace.names import model_json


def compare(
    first: Annotated[str, typer.Argument(metavar="A", help="An arm (variant) name.")],
    second: Annotated[
        str | None,
        typer.Argument(
            metavar="[B]",
            help="The arm to compare it with (with --baseline: its name there, default A).",
        ),
    ] = None,
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
    ] = MIN_TASKS,
    seed: Annotated[
        int, typer.Option("--seed", help="The seed of P(better) and the simulations.")
    ] = 0,
    confidence: Annotated[
        float, typer.Option("--confidence", metavar="LEVEL", help="1 - the error rate.")
    ] = 0.95,
    margin: Annotated[
        float | None,
        typer.Option(
            "--margin", metavar="RATE", help="Call arms within this difference equivalent."
        ),
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            metavar="EARLIER",
            help="Compare A with itself in an earlier results folder or pytest session.",
        ),
    ] = None,
    accepted_only: Annotated[
        bool, typer.Option("--accepted-only", help="Only passes a person accepted count.")
    ] = False,
    json_output: opt.JsonOption = False,
    all_tasks: AllTasksOption = False,
    suite: AuditedSuiteOption = None,
) -> None:
    """Compare two arms paired by task: the table, the interval, the test and the verdict."""
    if baseline is not None:
        if suite is not None:
            raise UserError(
                "--suite and --baseline ask for two countings: with a baseline each folder "
                "counts by what its runs recorded; give one"
            )
        found = compare_to_baseline(
            results, baseline, first, baseline_arm=second, margin=margin, all_tasks=all_tasks
        )
    elif second is None:
        raise UserError("compare needs two arms, or one arm and --baseline EARLIER")
    else:
        found = compare_arms(
            results,
            first,
            second,
            runs=run or (),
            min_tasks=min_tasks,
            seed=seed,
            confidence=confidence,
            margin=margin,
            accepted_only=accepted_only,
            all_tasks=all_tasks,
            suite_trust=audits_now(suite),
        )
    if json_output:
        print(model_json(found))
    else:
        stdout().print(render_comparison(found))
