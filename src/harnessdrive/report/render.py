"""The scoreboard for a terminal (rich), plain when the output is not a terminal."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from harnessdrive.report.fitting import Column, Fitted, shown_columns, table_of
from harnessdrive.report.rules import differential_parts
from harnessdrive.report.scoreboard import HarnessRow, Report, TaskRow, TrialRow
from harnessdrive.report.verdicts import statistics_lines
from harnessdrive.workspace.names import encodable, shown

_STYLE = {"pass": "green", "fail": "red", "tampered": "magenta bold"}
_SCOPE_LEGEND = (
    " Out of scope: trials that changed files outside the task's scope (reported; the tests "
    "still decided unless the task says such a change tampers)."
)


def render_report(report: Report) -> RenderableType:
    parts: list[RenderableType] = [Text(report.headline, style="bold")]
    if report.run_id:
        parts.append(Text(f"Run {report.run_id} of suite {report.suite_id or report.suite}"))
    for line in report.mixed:
        parts.append(Text(f"Mixed: {line}", style="yellow"))
    for line in report.trust.lines() if report.trust else ():
        parts.append(Text(encodable(line), style="yellow"))
    if report.harnesses:
        parts.append(_harness_table(report))
        parts.extend(Text(line) for line in statistics_lines(report))
    if report.could_not_run:
        parts.append(_broken_table(report.could_not_run))
    if report.tasks:
        parts.append(_task_table(report))
    parts.extend(differential_parts(report))
    for note in report.notes:
        parts.append(Text(f"- {encodable(note)}", style="dim"))
    parts.extend(_path_lines(report))
    parts.append(Text(_legend(report), style="dim"))
    return Group(*parts)


def _legend(report: Report) -> str:
    legend = (
        "Rate: the mean of per-task pass rates; Interval: its "
        f"{report.statistics.confidence * 100:.3g}% interval over tasks and "
        "their repeats; Standing: best, tied, baseline (a calibration line), or the verdict "
        "against the best. "
        "Visible, Hidden: trials that passed the tests the agent could see (-: the tasks name "
        "no visible command), and the hidden tests that decide. Min: median agent minutes. "
        "Tokens: median tokens per trial. "
        "$/pass: all spend on the compared tasks, failed trials included, per pass. Lines: "
        "median lines changed. No run: trials that could not run. (!): a cost more than 2% "
        "from the harness's own figure."
    )
    if any(row.unmeasured for row in report.harnesses):
        legend += (
            " +k*: k trials whose cost is not a full measurement (estimated, unmeasured, "
            "unpriced, or from a cut-off run); they count what they were charged."
        )
    if _scored(report):
        legend += " Score: mean score of the finished trials whose grader gives one."
    if _scoped(report):
        legend += _SCOPE_LEGEND
    return legend


def _path_lines(report: Report) -> list[RenderableType]:
    """Findings and paths left out of a change, grouped per arm, each name escaped for the
    terminal."""
    lines: list[RenderableType] = []
    for variant in dict.fromkeys(trial.variant for trial in report.trials):
        trials = [t for t in report.trials if t.variant == variant]
        found = [(t, f) for t in trials for f in t.findings]
        left = [(t, item) for t in trials for item in t.left_out]
        if not found and not left:
            continue
        flagged = len({t.trial_id for t, _ in [*found, *left]})
        noun = "trial" if len(trials) == 1 else "trials"
        lines.append(Text(f"Findings, {variant} ({flagged} of {len(trials)} {noun}):"))
        for trial, finding in found:
            where = f" {shown(finding.path)}" if finding.path else ""
            text = f"  - {_trial_name(trial)}: {finding.code}{where}: {shown(finding.detail)}"
            lines.append(Text(text, style="magenta"))
        for trial, item in left:
            where = f" {shown(item.path)}" if item.path else ""
            text = f"  - {_trial_name(trial)}: left out ({item.code}){where}: {shown(item.detail)}"
            lines.append(Text(text))
    return lines


def _trial_name(trial: TrialRow) -> str:
    """``task r2``: the arm is the group's heading."""
    attempt = f" attempt {trial.attempt}" if trial.attempt > 1 else ""
    return f"{trial.task} r{trial.repetition}{attempt}"


COMPACT_BELOW = 110
"""Narrower than this, the scoreboard is the compact one whatever fits."""


def _harness_table(report: Report) -> Fitted:
    return Fitted(
        [
            lambda: _full_table(report),
            lambda: _full_table(report, _DETAIL_COLUMNS),
            lambda: _compact_table(report),
        ],
        narrowest_full=COMPACT_BELOW,
    )


_TITLE = "Harnesses, ranked by the mean per-task pass rate"


_DETAIL_COLUMNS = frozenset({"Version", "Visible", "Hidden", "Lines", "Timeouts", "No run"})
"""Left out first when the whole table does not fit; the legend and ``show`` still say them."""


def _full_table(report: Report, left_out: frozenset[str] = frozenset()) -> Table:
    rows = report.harnesses
    columns = [
        Column("#", _ranks(report), right=True, kept=True),
        Column("Harness", tuple(row.variant for row in rows), kept=True),
        Column("Version", tuple(", ".join(row.versions) or "-" for row in rows)),
        Column("Passed", tuple(f"{row.passed} of {row.trials}" for row in rows), True, kept=True),
        Column("Accepted", tuple(_accepted(row, report) for row in rows), True),
        Column("Rate", tuple(_percent(row.pass_rate) for row in rows), True, kept=True),
        Column("Interval", tuple(_interval(row) for row in rows), True),
        Column("Standing", tuple(row.versus_best or "-" for row in rows), True),
        Column("Score", tuple(_number(row.mean_score, 2) for row in rows), True),
        Column("Visible", tuple(_of(r.visible_passed, r.visible_trials) for r in rows), True),
        Column("Hidden", tuple(_of(r.hidden_passed, r.hidden_trials) for r in rows), True),
        Column("Min", tuple(_number(row.median_minutes, 2) for row in rows), True),
        Column("Tokens", tuple(_tokens(row.median_tokens) for row in rows), True),
        Column("$/pass", tuple(_cost(row) for row in rows), True),
        Column("Lines", tuple(_number(row.median_lines_changed, 0) for row in rows), True),
        Column("Tampered", tuple(str(row.tampered) for row in rows), True),
        Column("Timeouts", tuple(str(row.timeouts) for row in rows), True),
        Column("No run", tuple(str(row.could_not_run) for row in rows), True),
        Column("Out of scope", tuple(str(row.out_of_scope) for row in rows), True),
    ]
    if not _scored(report):
        # A score column only for graders that give one.
        left_out |= {"Score"}
    return table_of(_TITLE, shown_columns([c for c in columns if c.header not in left_out]))


def _compact_table(report: Report) -> Table:
    """``# | arm | passed | rate [interval] | $/pass | verdict``; names and intervals wrap
    rather than being cut."""
    rows = report.harnesses
    columns = [
        Column("#", _ranks(report), right=True, kept=True),
        Column("Arm", tuple(row.variant for row in rows), wraps=True, kept=True),
        Column("Passed", tuple(f"{row.passed} of {row.trials}" for row in rows), True, kept=True),
        Column("Rate [interval]", tuple(_rate_interval(r) for r in rows), True, True, True),
        Column("$/pass", tuple(_cost(row) for row in rows), True),
        Column("Verdict", tuple(row.versus_best or "-" for row in rows)),
    ]
    return table_of(_TITLE, shown_columns(columns), compact=True)


def _ranks(report: Report) -> tuple[str, ...]:
    return tuple(str(row.rank or rank) for rank, row in enumerate(report.harnesses, 1))


def _rate_interval(row: HarnessRow) -> str:
    rate = _percent(row.pass_rate)
    return rate if row.interval is None else f"{rate} [{_interval(row)}]"


def _accepted(row: HarnessRow, report: Report) -> str:
    """``2 of 3 reviewed, 67%``: accepted passes of the reviewed ones and the accepted-pass
    rate (mean over tasks); ``-`` when none is reviewed."""
    if row.accepted is None:
        return "-"
    arm = next((a for a in report.statistics.arms if a.variant == row.variant), None)
    rate = f", {arm.accepted_rate * 100:.0f}%" if arm and arm.accepted_rate is not None else ""
    return f"{row.accepted} of {row.accepted + row.rejected} reviewed{rate}"


def _scored(report: Report) -> bool:
    return any(row.mean_score is not None for row in report.harnesses)


def _scoped(report: Report) -> bool:
    return any(row.out_of_scope for row in report.harnesses)


def _broken_table(rows: tuple[HarnessRow, ...]) -> Table:
    table = Table(title="No verdict: could not run, or not graded", title_justify="left")
    table.add_column("Harness")
    table.add_column("No run", justify="right")
    table.add_column("Not graded", justify="right")
    table.add_column("Error or fix")
    for row in rows:
        table.add_row(
            row.variant,
            str(row.could_not_run),
            str(row.not_graded),
            encodable(row.first_error or "-"),
        )
    return table


def _task_table(report: Report) -> Fitted:
    """Tasks down and arms across; arms down and tasks across when only that fits; one line
    per task and arm when neither does."""
    variants = [row.variant for row in report.harnesses] + [r.variant for r in report.could_not_run]
    return Fitted(
        [
            lambda: _tasks_by_arm(report, variants),
            lambda: _arms_by_task(report, variants),
            lambda: _task_lines(report, variants),
        ]
    )


def _task_name(task: TaskRow) -> str:
    return task.task if task.compared else f"{task.task} (not compared)"


def _result(task: TaskRow, variant: str) -> Text:
    cell = task.cells.get(variant)
    text = cell.text if cell else "not run"
    return Text(text, style=_STYLE.get(text.split(" ")[0], ""))


def _tasks_by_arm(report: Report, variants: list[str]) -> Table:
    columns = [Column("Task", tuple(_task_name(t) for t in report.tasks), kept=True)]
    columns += [Column(v, tuple(_result(t, v) for t in report.tasks), kept=True) for v in variants]
    return table_of("Tasks", columns)


def _arms_by_task(report: Report, variants: list[str]) -> Table:
    columns = [Column("Arm", tuple(variants), kept=True)]
    columns += [
        Column(_task_name(t), tuple(_result(t, v) for v in variants), kept=True)
        for t in report.tasks
    ]
    return table_of("Tasks", columns)


def _task_lines(report: Report, variants: list[str]) -> Table:
    pairs = [(t, v) for t in report.tasks for v in variants]
    columns = [
        Column("Task", tuple(_task_name(t) for t, _ in pairs), wraps=True, kept=True),
        Column("Arm", tuple(v for _, v in pairs), wraps=True, kept=True),
        Column("Result", tuple(_result(t, v) for t, v in pairs), wraps=True, kept=True),
    ]
    return table_of("Tasks", columns, compact=True)


def _cost(row: HarnessRow) -> str:
    text = "-" if row.cost_per_pass is None else f"${row.cost_per_pass:.2f}"
    if row.unmeasured:
        text += f" +{row.unmeasured}*"
    if row.cost_mismatches:
        text += " (!)"
    return text


def _tokens(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 1_000:
        return f"{value / 1_000:.0f}k"
    return f"{value:.0f}"


def _of(passed: int, trials: int) -> str:
    return f"{passed} of {trials}" if trials else "-"


def _interval(row: HarnessRow) -> str:
    bounds = row.interval
    return "-" if bounds is None else f"{bounds.low * 100:.0f}–{bounds.high * 100:.0f}%"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
