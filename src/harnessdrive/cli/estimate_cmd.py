"""``harnessdrive estimate``: what a run would cost, before it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Group
from rich.table import Table
from rich.text import Text

from harnessdrive.accounting import PriceBook
from harnessdrive.cli.output import DEFAULT_RESULTS, ResultsOption, stdout
from harnessdrive.cli.run_cmd import AllowUnpricedOption, HarnessOption, PricesOption
from harnessdrive.running.estimate import Estimate, build_estimate
from harnessdrive.running.plan import make_plan
from harnessdrive.running.pricing import today
from harnessdrive.running.variants import resolve_variants, split_names
from harnessdrive.tasks.loading import load_suite


def estimate(
    suite: Annotated[Path, typer.Argument(help="A suite folder (suite.toml) or a task folder.")],
    harness: HarnessOption = None,
    repeat: Annotated[int, typer.Option("--repeat", "-n", help="Trials per task and harness.")] = 1,
    results: ResultsOption = DEFAULT_RESULTS,
    cmd: Annotated[
        list[str] | None,
        typer.Option("--cmd", help="NAME=TEMPLATE: run any CLI as a variant named NAME."),
    ] = None,
    model: Annotated[
        list[str] | None, typer.Option("--model", help="HARNESS=MODEL: pin a model.")
    ] = None,
    allow_unpriced: AllowUnpricedOption = None,
    prices: PricesOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Estimate what a run would cost, per harness and in total, without running anything."""
    loaded = load_suite(suite)
    variants = resolve_variants(loaded, harness or [], commands=cmd or [], models=model or [])
    plan = make_plan(loaded, variants, repeat)
    found = build_estimate(
        plan,
        PriceBook.load(tuple(prices or ())),
        results.resolve(),
        on=today(),
        allow_unpriced=frozenset(split_names(allow_unpriced or [])),
    )
    if json_output:
        print(found.to_json())
    else:
        stdout().print(render_estimate(found))


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}"


def _span(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "unknown"
    return _money(low) if low == high else f"{_money(low)}–{_money(high)}"


def render_estimate(found: Estimate) -> Group:
    table = Table(title=f"Estimate for {found.suite} (prices of {found.on})", title_justify="left")
    for column in ("Harness", "Installed", "Trials", "Per trial", "Total", "Basis", "Models"):
        table.add_column(column)
    notes = []
    for row in found.variants:
        installed = (row.version or "yes") if row.installed else "no"
        trials = str(row.trials) if row.to_run == row.trials else f"{row.to_run} of {row.trials}"
        models = "; ".join(
            f"{m.model}: {m.record} ({m.source})" if m.record else f"{m.model}: UNPRICED"
            for m in row.models
        )
        if not row.uses_model:
            models = "no model"
        table.add_row(
            row.variant,
            installed,
            trials,
            _span(row.per_trial_low_usd, row.per_trial_high_usd),
            _span(row.total_low_usd, row.total_high_usd),
            row.basis_detail or "-",
            models or "-",
        )
        if row.problem:
            notes.append(f"{row.variant}: {row.problem}")
    lines: list[Table | Text] = [table]
    lines.append(
        Text(
            f"Total: {_span(found.total_low_usd, found.total_high_usd)}. Already counted in "
            f"{found.results}: {_money(found.spent_usd)}. Trials already recorded are not run "
            "again.",
        )
    )
    for note in notes:
        lines.append(Text(f"- {note}", style="dim"))
    lines.append(
        Text(
            f"Assumed tokens without history: {found.short_run.total:,} (short run) to "
            f"{found.long_run.total:,} (long run); assumptions, not measurements.",
            style="dim",
        )
    )
    return Group(*lines)
