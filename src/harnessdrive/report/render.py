"""The scoreboard for a terminal (rich), plain when the output is not a terminal."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from harnessdrive.report.rules import differential_parts
from harnessdrive.report.scoreboard import HarnessRow, Report
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
    """Findings and paths left out of a change, each name escaped for the terminal."""
    lines: list[RenderableType] = []
    for trial in report.trials:
        for finding in trial.findings:
            where = f" {shown(finding.path)}" if finding.path else ""
            text = f"- {trial.trial_id}: {finding.code}{where}: {shown(finding.detail)}"
            lines.append(Text(text, style="magenta"))
        for item in trial.left_out:
            where = f" {shown(item.path)}" if item.path else ""
            text = f"- {trial.trial_id}: left out ({item.code}){where}: {shown(item.detail)}"
            lines.append(Text(text))
    return lines


def _harness_table(report: Report) -> Table:
    table = Table(title="Harnesses, ranked by the mean per-task pass rate", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("Harness", no_wrap=True)
    table.add_column("Version")
    # A score column only for graders that give one; today's suites keep their table.
    scored = _scored(report)
    reviewed = any(row.accepted is not None for row in report.harnesses)
    names = (
        "Passed",
        *(("Accepted",) if reviewed else ()),
        "Rate",
        "Interval",
        "Standing",
        *(("Score",) if scored else ()),
    )
    for name in (
        *names,
        "Visible",
        "Hidden",
        "Min",
        "Tokens",
        "$/pass",
        "Lines",
        "Tampered",
        "Timeouts",
        "No run",
    ):
        table.add_column(name, justify="right", no_wrap=True)
    # Only suites whose tasks name a scope can stray from it; others keep the table narrow.
    scoped = _scoped(report)
    if scoped:
        table.add_column("Out of scope", justify="right", no_wrap=True)
    for rank, row in enumerate(report.harnesses, 1):
        scope_cell = [str(row.out_of_scope)] if scoped else []
        score_cell = [_number(row.mean_score, 2)] if scored else []
        review_cell = [_accepted(row, report)] if reviewed else []
        table.add_row(
            str(row.rank or rank),
            row.variant,
            ", ".join(row.versions) or "-",
            f"{row.passed} of {row.trials}",
            *review_cell,
            _percent(row.pass_rate),
            _interval(row),
            row.versus_best or "-",
            *score_cell,
            _of(row.visible_passed, row.visible_trials),
            _of(row.hidden_passed, row.hidden_trials),
            _number(row.median_minutes, 2),
            _tokens(row.median_tokens),
            _cost(row),
            _number(row.median_lines_changed, 0),
            str(row.tampered),
            str(row.timeouts),
            str(row.could_not_run),
            *scope_cell,
        )
    return table


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


def _task_table(report: Report) -> Table:
    table = Table(title="Tasks", title_justify="left")
    table.add_column("Task")
    variants = [row.variant for row in report.harnesses] + [r.variant for r in report.could_not_run]
    for variant in variants:
        table.add_column(variant)
    for task in report.tasks:
        name = task.task if task.compared else f"{task.task} (not compared)"
        cells = []
        for variant in variants:
            cell = task.cells.get(variant)
            text = cell.text if cell else "not run"
            style = _STYLE.get(text.split(" ")[0], "")
            cells.append(Text(text, style=style))
        table.add_row(name, *cells)
    return table


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
