"""Two arms compared by name, paired by task, over the runs of a results folder
(``harnessdrive compare A B``).

The comparison is the one the report of the same trials makes (the same tasks, the same Holm
family, the same verdict), read from A's side. A pair the report does not compare (a baseline
is one of them) is compared on its own, a family of one, and says so."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from harnessdrive.errors import Setting, UserError, did_you_mean
from harnessdrive.pytest_plugin.gates import session_trials
from harnessdrive.pytest_plugin.session_report import is_session
from harnessdrive.report.arm_inputs import arm_inputs
from harnessdrive.report.loading import View, folder_trials_trust
from harnessdrive.report.provenance import provenance_differences
from harnessdrive.report.scoreboard import build_report, finished
from harnessdrive.report.statistics import (
    CONFIDENCE,
    DEFAULT_SEED,
    Comparison,
    ProvenanceRow,
    comparison_row,
)
from harnessdrive.report.verdicts import describe
from harnessdrive.stats.decisions import MIN_TASKS, ArmInput, decide
from harnessdrive.store.review import decisions
from harnessdrive.store.store import Store
from harnessdrive.store.trust import TaskTrust


def compare_arms(
    results: Path,
    first: str,
    second: str,
    *,
    runs: Sequence[str] = (),
    min_tasks: int = MIN_TASKS,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
    margin: float | None = None,
    accepted_only: bool = False,
    all_tasks: bool = False,
    suite_trust: Mapping[str, TaskTrust] | None = None,
) -> Comparison:
    """``first`` against ``second`` as the report of the runs of ``results`` compares them:
    on the same trials, those on tasks the audit marked untrusted or invalid left out unless
    ``all_tasks`` (``suite_trust``: by the suite's audits now, as ``report --suite``)."""
    if first == second:
        raise UserError(f"compare needs two different arms, got {first!r} twice")
    if min_tasks < 1:
        raise UserError("--min-tasks must be at least 1")
    if not 0 < confidence < 1:
        raise UserError(f"--confidence must lie between 0 and 1, not {confidence}")
    if margin is not None and not 0 < margin < 1:
        raise UserError(
            f"the margin is a difference of rates between 0 and 1, not {margin}",
            settings=(Setting("margin"),),
        )
    # A pytest session's folder holds a store per worker: all of them are read.
    session = is_session(results) and not runs
    counting = None
    if session:
        trials = session_trials(results)
    else:
        trials, trust = folder_trials_trust(results, runs)
        view = View(all_tasks=all_tasks, suite_trust=suite_trust)
        trials, counting = view.counted(trials, trust)
    if len({t.suite for t in trials}) > 1 and not session:  # a session's case ids are unique
        # Tasks of different suites may share a name: pair them by suite and task.
        trials = [t.revised(task=f"{t.suite}/{t.task}") for t in trials]
    known = sorted({t.variant_label for t in trials if finished(t)})
    for name in (first, second):
        if name not in known:
            raise UserError(
                f"no finished trial of an arm named {name!r}{did_you_mean(name, known)}; "
                f"arms here: {', '.join(known) or 'none'}"
            )
    reviews = decisions(trials, Store(results).paths.trials)
    report = build_report(
        trials,
        reviews=reviews,
        accepted_only=accepted_only,
        margin=margin,
        confidence=confidence,
        min_tasks=min_tasks,
        seed=seed,
        pooled=session,  # as the session's own report counts its cases
        trust=counting,
    )
    found = report.statistics.between(first, second)
    if found is None:
        compared = {t.task for t in report.tasks if t.compared}
        counted = [t for t in trials if finished(t) and t.task in compared]
        arms = [
            ArmInput(a.name, a.outcomes, a.costs)
            for a in arm_inputs(
                counted, [first, second], reviews=reviews, accepted_only=accepted_only
            )
        ]
        alone = decide(arms, confidence=confidence, margin=margin, min_tasks=min_tasks, seed=seed)
        found = comparison_row(alone.comparisons[0], alone)
        if found.first != first:
            found = found.flipped()
    differences = provenance_differences(
        [t for t in trials if t.variant_label == first],
        [t for t in trials if t.variant_label == second],
    )
    rows = tuple(
        ProvenanceRow(field=d.field, first=d.a, second=d.b, why=d.why, summary=d.summary)
        for d in differences
    )
    return found.model_copy(update={"provenance": rows, "trust": counting})


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
    family = (
        f"Holm over the {c.family} comparisons of the report of these trials"
        if c.family > 1
        else "one comparison"
    )
    lines = [
        Text(f"{c.first} against {c.second}: {describe(c)}", style="bold"),
        Text(
            f"Mean pass rate {_mean(c.first_mean)} against {_mean(c.second_mean)}; "
            f"{c.wins} task(s) better, {c.losses} worse, {c.ties} the same; {family}; "
            f"the verdict needs p below {c.threshold:.3g} and the "
            f"{c.confidence * 100:.3g}% interval to exclude 0."
        ),
    ]
    lines.extend(Text(line) for line in (c.trust.lines() if c.trust else []))
    if c.provenance:
        lines.append(Text("Beyond what their variants say, the arms' trials differ in:"))
        lines.extend(Text(_provenance_line(row, c)) for row in c.provenance)
    return Group(table, *lines)


def _provenance_line(row: ProvenanceRow, c: Comparison) -> str:
    if row.summary:
        summary = row.summary.replace("A: ", f"{c.first}: ", 1).replace(
            ", B: ", f", {c.second}: ", 1
        )
        return f"  {row.field} ({row.why}): {summary}"
    return (
        f"  {row.field} ({row.why}): {c.first} {', '.join(row.first) or '-'}; "
        f"{c.second} {', '.join(row.second) or '-'}"
    )


def _rate(mean: float, trials: int) -> str:
    return f"{mean * trials:g}/{trials}"


def _mean(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"
