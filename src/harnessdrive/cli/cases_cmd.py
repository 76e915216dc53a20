"""``harnessdrive cases build``: freeze a differential task's hidden case set."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harnessdrive.cli.output import stdout
from harnessdrive.grading.differential.casesets import freeze_task_cases
from harnessdrive.tasks.loading import load_task

cases_app = typer.Typer(help="Case sets of differential tasks.", no_args_is_help=True)


@cases_app.command("build")
def build(
    task: Annotated[Path, typer.Argument(metavar="TASK", help="A differential task's folder.")],
    pool: Annotated[int, typer.Option("--pool", help="Cases generated to choose from.")] = 2000,
    per_rule: Annotated[int, typer.Option("--per-rule", help="Cases per rule bucket.")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the generator.")] = 0,
    profile: Annotated[
        str | None, typer.Option("--profile", help="Generator profile (default: the task's).")
    ] = None,
    dev: Annotated[int, typer.Option("--dev", help="Also write N visible dev cases.")] = 0,
    base: Annotated[
        int | None,
        typer.Option("--base", help="Cases in the base bucket (default: --per-rule; 0: none)."),
    ] = None,
) -> None:
    """Generate cases, answer and tag them with the oracle, fill one bucket per rule and freeze
    them (JSONL and a meta file) into the task's hidden files."""
    frozen = freeze_task_cases(
        load_task(task),
        pool=pool,
        per_rule=per_rule,
        seed=seed,
        profile=profile,
        dev=dev,
        base=base,
    )
    buckets = ", ".join(f"{name} {count}" for name, count in frozen.buckets.items())
    console = stdout()
    if frozen.resumed:
        console.print(f"resumed: {frozen.resumed} cases and answers from an unfinished build")
    if frozen.composes is None:
        console.print("switches: no case two rules change, so their composing was not checked")
    console.print(f"{frozen.cases} cases frozen into {frozen.path} ({buckets})")
    for name, count in frozen.buckets.items():
        alone = frozen.isolated.get(name, 0)
        if alone < count:  # such a bucket's rate also depends on how other rules are done
            what = "no rule" if name == "base" else f"{name!r} alone"
            console.print(f"bucket {name!r}: {alone} of its {count} cases measure {what}")
    if frozen.dev_path is not None:
        console.print(f"{frozen.dev_cases} dev cases written to {frozen.dev_path}")
