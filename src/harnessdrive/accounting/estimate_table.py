"""The estimate of a run, as a table."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text

from harnessdrive.accounting.run_estimate import Estimate
from harnessdrive.errors import Setting

WithSettings = Callable[[str, Sequence[Setting]], str]
"""A problem and the settings that fix it, as a front end words them (the CLI adds its flags)."""


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}"


def _span(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "unknown"
    return _money(low) if low == high else f"{_money(low)}–{_money(high)}"


def _total(found: Estimate) -> str:
    """The sum of what can be estimated; a variant without a price makes the total open-ended."""
    if len(found.left_out) == len(found.variants):
        return "unknown"
    total = _span(found.total_low_usd, found.total_high_usd)
    if found.left_out:
        return f"{total} plus {', '.join(found.left_out)} (unknown)"
    return total


def render_estimate(found: Estimate, *, with_settings: WithSettings) -> Group:
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
            notes.append(with_settings(f"{row.variant}: {row.problem}", row.fix))
    lines: list[Table | Text] = [table]
    lines.append(
        Text(
            f"Total: {_total(found)}. Already counted in {found.results}: "
            f"{_money(found.spent_usd)}. Trials already recorded are not run again.",
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
