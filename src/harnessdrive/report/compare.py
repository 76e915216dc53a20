"""Two arms compared by name, paired by task, over the runs of a results folder
(``harnessdrive compare A B``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.report.loading import folder_trials
from harnessdrive.report.provenance import provenance_differences
from harnessdrive.report.scoreboard import finished
from harnessdrive.report.statistics import CONFIDENCE, Comparison, ProvenanceRow, compare_many
from harnessdrive.report.verdicts import describe
from harnessdrive.stats import MIN_PAIRED_TASKS
from harnessdrive.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from harnessdrive.store.results import TrialResult


def compare_arms(
    results: Path,
    first: str,
    second: str,
    *,
    runs: Sequence[str] = (),
    min_tasks: int = MIN_PAIRED_TASKS,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> Comparison:
    """``first`` against ``second`` on the tasks both finished in the runs of ``results``."""
    if first == second:
        raise UserError(f"compare needs two different arms, got {first!r} twice")
    if min_tasks < 1 or resamples < 1:
        raise UserError("--min-tasks and --resamples must be at least 1")
    if not 0 < confidence < 1:
        raise UserError(f"--confidence must lie between 0 and 1, not {confidence}")
    trials = [t for t in folder_trials(results, runs) if finished(t)]
    known = sorted({t.variant_label for t in trials})
    for name in (first, second):
        if name not in known:
            raise UserError(
                f"no finished trial of an arm named {name!r}{did_you_mean(name, known)}; "
                f"arms here: {', '.join(known) or 'none'}"
            )
    arms = {first: _outcomes(trials, first), second: _outcomes(trials, second)}
    found = compare_many(
        [(first, second)],
        arms,
        seed=seed,
        resamples=resamples,
        min_tasks=min_tasks,
        confidence=confidence,
    )[0]
    differences = provenance_differences(
        [t for t in trials if t.variant_label == first],
        [t for t in trials if t.variant_label == second],
    )
    rows = tuple(
        ProvenanceRow(field=d.field, first=d.a, second=d.b, why=d.why) for d in differences
    )
    return found.model_copy(update={"provenance": rows})


def _outcomes(trials: Sequence[TrialResult], arm: str) -> dict[str, list[float]]:
    suites = {t.suite for t in trials}
    found: dict[str, list[float]] = {}
    for trial in trials:
        if trial.variant_label == arm:
            key = trial.task if len(suites) == 1 else f"{trial.suite}/{trial.task}"
            found.setdefault(key, []).append(1.0 if trial.outcome == "pass" else 0.0)
    return found


def render_comparison(c: Comparison) -> RenderableType:
    table = Table(title=f"{c.first} against {c.second}, paired by task", title_justify="left")
    table.add_column("Task")
    for name in (c.first, c.second, "Difference"):
        table.add_column(name, justify="right", no_wrap=True)
    for task in c.tasks:
        table.add_row(
            task.task,
            _rate(task.first, task.first_trials),
            _rate(task.second, task.second_trials),
            f"{task.difference:+.2f}",
        )
    level = f"{c.confidence * 100:.4g}%"
    lines = [
        Text(f"{c.first} against {c.second}: {describe(c)}", style="bold"),
        Text(
            f"Mean pass rate {_mean(c.first_mean)} against {_mean(c.second_mean)}; "
            f"{c.wins} task(s) better, {c.losses} worse, {c.ties} the same; "
            f"{level} interval from a cluster bootstrap over tasks (seed and resamples in "
            f"--json); {c.test} on the tasks that differ."
        ),
    ]
    if c.unpaired:
        lines.append(Text(f"{c.unpaired} task(s) only one of them finished are left out."))
    if c.provenance:
        lines.append(Text("Beyond what their variants say, the arms' trials differ in:"))
        lines.extend(
            Text(
                f"  {row.field} ({row.why}): {c.first} {', '.join(row.first) or '-'}; "
                f"{c.second} {', '.join(row.second) or '-'}"
            )
            for row in c.provenance
        )
    return Group(table, *lines)


def _rate(mean: float, trials: int) -> str:
    return f"{mean * trials:g}/{trials}"


def _mean(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"
