"""The report's sections as HTML: scoreboard, task grid, comparisons, flaky tasks,
improvement, rules, and the per-trial drill-down."""

from __future__ import annotations

from collections.abc import Sequence

from harnessdrive.report.html import charts
from harnessdrive.report.html.text import attr, esc
from harnessdrive.report.html.trial_view import trial_anchor
from harnessdrive.report.scoreboard import Report, TrialRow
from harnessdrive.report.statistics import Bounds, Comparison
from harnessdrive.report.verdicts import describe_measure, family_line

CURVE = "improve.curve."


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _bounds(bounds: Bounds | None, percent: bool = True) -> str:
    if bounds is None:
        return "-"
    if percent:
        return f"{bounds.low * 100:.0f}–{bounds.high * 100:.0f}%"
    return f"{bounds.low:+.2f} to {bounds.high:+.2f}"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], css: str = "") -> str:
    """A table; cells are HTML already escaped by the caller."""
    heading = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f'<table class="{attr(css)}"><thead><tr>{heading}</tr></thead><tbody>{body}</tbody></table>'
    )


def scoreboard(report: Report) -> str:
    stats = report.statistics
    arms = {a.variant: a for a in stats.arms}
    reviewed = any(row.accepted is not None for row in report.harnesses)
    rows = []
    for rank, row in enumerate(report.harnesses, 1):
        arm = arms.get(row.variant)
        at_k = ", ".join(f"@{k} {v * 100:.0f}%" for k, v in (arm.pass_at_k if arm else {}).items())
        hat_k = ", ".join(
            f"^{k} {v * 100:.0f}%" for k, v in (arm.pass_hat_k if arm else {}).items()
        )
        rows.append(
            [
                str(rank),
                arm_link(row.variant),
                f"{row.passed} of {row.trials}",
                *([_accepted(row.accepted, row.rejected)] if reviewed else []),
                _pct(row.pass_rate),
                _bounds(row.interval),
                esc(row.versus_best or "-"),
                _of(row.visible_passed, row.visible_trials),
                _of(row.hidden_passed, row.hidden_trials),
                esc(at_k or "-"),
                esc(hat_k or "-"),
                "-" if row.cost_per_pass is None else f"${row.cost_per_pass:.4f}",
                f"${row.total_cost:.4f}",
                str(row.tampered),
                str(row.timeouts),
                str(row.could_not_run),
            ]
        )
    head = (
        "#",
        "Harness",
        "Passed",
        *(("Accepted",) if reviewed else ()),
        "Rate",
        "Interval",
        "Standing",
        "Visible",
        "Hidden",
        "pass@k",
        "pass^k",
        "$/pass",
        "Spent",
        "Tampered",
        "Timeouts",
        "No run",
    )
    broken = "".join(
        f"<li>{esc(row.variant)}: {esc(row.first_error or 'no verdict')}</li>"
        for row in report.could_not_run
    )
    return (
        '<section id="scoreboard"><h2>Scoreboard</h2>'
        + _table(head, rows, "scoreboard")
        + (f"<p>No verdict:</p><ul>{broken}</ul>" if broken else "")
        + (charts.pass_rate_chart(stats.arms) if stats.arms else "")
        + "</section>"
    )


def arm_link(variant: str) -> str:
    """The arm's name, linking to its trials (the page's script sets the arm filter)."""
    return f'<a href="#trials" data-arm="{attr(variant)}">{esc(variant)}</a>'


def _accepted(accepted: int | None, rejected: int) -> str:
    if accepted is None:
        return "-"
    return f"{accepted} of {accepted + rejected} reviewed"


def _of(passed: int, trials: int) -> str:
    return f"{passed} of {trials}" if trials else "-"


def cost(report: Report) -> str:
    stats = report.statistics
    if not stats.arms:
        return ""
    frontier = ", ".join(stats.frontier) or "none"
    return (
        '<section id="cost"><h2>Pass rate against cost</h2>'
        f"<p>Pareto frontier at the estimates: {esc(frontier)}. Circles: each arm's pass rate "
        "and cost a task; whiskers: their intervals (a cost without spread has none). A "
        "noisy arm keeps its place; its noise is drawn.</p>"
        + charts.cost_chart(stats.arms)
        + "</section>"
    )


def task_grid(report: Report) -> str:
    variants = [r.variant for r in (*report.harnesses, *report.could_not_run)]
    rows = []
    for task in report.tasks:
        cells = [
            esc(task.task)
            + (f" <small>{esc(task.title)}</small>" if task.title else "")
            + ("" if task.compared else " <small>(not compared)</small>")
        ]
        for variant in variants:
            cell = task.cells.get(variant)
            text = cell.text if cell else "not run"
            css = _cell_class(cell.passed if cell else 0, cell.trials if cell else 0, text)
            links = " ".join(
                f'<a href="#{trial_anchor(i)}" title="open this trial">r{t.repetition}</a>'
                for i, t in enumerate(report.trials)
                if t.task == task.task and t.variant == variant
            )
            cells.append(f'<span class="cell {css}">{esc(text)}</span> {links}')
        rows.append(cells)
    return (
        '<section id="tasks"><h2>Tasks</h2>'
        + _table(["Task", *variants], rows, "grid")
        + "</section>"
    )


def _cell_class(passed: int, trials: int, text: str) -> str:
    if text.startswith("tampered"):
        return "tampered"
    if trials and passed == trials:
        return "pass"
    if passed:
        return "mixed"
    return "fail" if trials else "none"


def comparisons(report: Report) -> str:
    stats = report.statistics
    if not stats.comparisons:
        return ""
    rows = [_comparison_row(c) for c in stats.comparisons]
    head = (
        "Arm",
        "Against",
        "Paired tasks",
        "Difference",
        "Interval",
        "Better/worse/same",
        "p",
        "p (Holm)",
        "Needs p <",
        "P(better)",
        "Cost difference",
        "Verdict",
    )
    tables = "".join(_paired_tasks(c) for c in stats.comparisons)
    return (
        '<section id="comparisons"><h2>Paired comparisons</h2>'
        f"<p>{esc(family_line(stats))} Repeats are averaged within a task and every task weighs "
        "the same. One pass/fail trial per task and arm: exact McNemar and Tango's score "
        "interval; otherwise the sign-flip permutation test on per-task differences and a t "
        "interval over tasks. A verdict needs the Holm-adjusted p below "
        f"{1 - stats.confidence:.2g} and the interval at the comparison's own level to exclude "
        "0; an inconclusive one says which failed and what would likely settle it, simulated "
        "from this run (docs/report.md).</p>"
        + _table(head, rows, "comparisons")
        + tables
        + "</section>"
    )


def _comparison_row(c: Comparison) -> list[str]:
    diff = "-" if c.difference is None else f"{c.difference * 100:+.0f} points"
    interval = (
        "-"
        if c.interval is None
        else f"{c.interval.low * 100:+.0f} to {c.interval.high * 100:+.0f} "
        f"({c.confidence * 100:.3g}%)"
    )
    cost = "-" if c.cost_difference is None else f"${c.cost_difference:+.4f}"
    if c.cost_interval is not None:
        cost += f" ({c.cost_interval.low:+.4f} to {c.cost_interval.high:+.4f})"
    verdict = f'<b class="verdict">{esc(c.verdict)}</b>'
    if c.reason:
        verdict += f"<br>{esc(c.reason)}"
    if c.settle:
        verdict += f"<br>{esc(c.settle)} (an estimate from this run)"
    for measure in c.measures:
        verdict += f"<br>{esc(describe_measure(measure))}"
    return [
        arm_link(c.first),
        arm_link(c.second),
        str(len(c.tasks)),
        diff,
        esc(interval),
        f"{c.wins}/{c.losses}/{c.ties}",
        f"{c.p_value:.3g}",
        f"{c.p_adjusted:.3g}",
        f"{c.threshold:.3g}",
        f"{c.p_better:.2f}",
        esc(cost),
        verdict,
    ]


def _paired_tasks(c: Comparison) -> str:
    rows = [
        [
            esc(t.task),
            f"{t.first:.2f} ({t.first_trials})",
            f"{t.second:.2f} ({t.second_trials})",
            f"{t.difference:+.2f}",
        ]
        for t in c.tasks
    ]
    return (
        f"<details><summary>{esc(c.first)} against {esc(c.second)}, task by task</summary>"
        + _table(["Task", c.first, c.second, "Difference"], rows)
        + "</details>"
    )


def flaky(report: Report) -> str:
    found = report.statistics.flaky
    if not found:
        return ""
    rows = [
        [esc(f.task), esc(f.variant), f"{f.passes:g} of {f.trials}", esc(f.reason)] for f in found
    ]
    return (
        '<section id="flaky"><h2>Flaky tasks</h2>'
        + _table(["Task", "Arm", "Passed", "Why"], rows)
        + "</section>"
    )


def improvement(report: Report) -> str:
    arms = [a for a in report.statistics.arms if a.improvement]
    order = {a.variant: i for i, a in enumerate(report.statistics.arms)}
    curves = []
    for trial in report.trials:
        points = sorted(
            (int(k[len(CURVE) :]), v)
            for k, v in trial.metrics.items()
            if k.startswith(CURVE) and k[len(CURVE) :].isdigit()
        )
        if len(points) >= 2:
            label = f"{trial.variant} on {trial.task} (r{trial.repetition})"
            values = [v for _, v in points]
            curves.append((label, order.get(trial.variant, 0), values, _lower_is_better(trial)))
    if not arms and not curves:
        return ""
    rows = [
        [
            esc(a.variant),
            f"x{a.improvement.ratio:.3g}",
            _ratio_bounds(a.improvement.interval),
            str(a.improvement.tasks),
        ]
        for a in arms
        if a.improvement
    ]
    return (
        '<section id="improvement"><h2>Improvement</h2>'
        "<p>The geometric mean over tasks of final against baseline (above 1 is better), with a "
        "cluster bootstrap interval on the log scale.</p>"
        + _table(["Arm", "Ratio", "Interval", "Tasks"], rows)
        + (charts.curve_chart(curves) if curves else "")
        + "</section>"
    )


def _lower_is_better(trial: TrialRow) -> bool:
    """Whether the trial's objective falls as it improves: its recorded ratio (above 1 is
    better) is above 1 while its values fell, or below 1 while they rose."""
    ratio = trial.metrics.get("improve.ratio")
    first, last = trial.metrics.get(f"{CURVE}0"), None
    rounds = [k for k in trial.metrics if k.startswith(CURVE) and k[len(CURVE) :].isdigit()]
    if rounds:
        last = trial.metrics[max(rounds, key=lambda k: int(k[len(CURVE) :]))]
    if ratio is None or first is None or last is None or ratio == 1 or first == last:
        return False
    return (ratio > 1) == (last < first)


def _ratio_bounds(bounds: Bounds | None) -> str:
    return "-" if bounds is None else f"x{bounds.low:.3g} to x{bounds.high:.3g}"


def rules(report: Report) -> str:
    arms = [a for a in report.statistics.arms if a.rules]
    if not arms:
        return ""
    rows = [
        [
            esc(a.variant),
            esc(r.rule),
            f"{r.passed:g} of {r.cases:g}",
            _pct(r.rate),
            _bounds(r.interval),
        ]
        for a in arms
        for r in a.rules
    ]
    return (
        '<section id="rules"><h2>Per-rule scores</h2>'
        + _table(["Arm", "Rule", "Cases passed", "Rate", "95% CI"], rows)
        + charts.rules_chart(arms)
        + "</section>"
    )


def header(report: Report) -> str:
    lines = [f'<h1 id="answer">{esc(report.headline)}</h1>']
    if report.run_id:
        lines.append(
            f"<p>Run {esc(report.run_id)} of suite {esc(report.suite_id or report.suite)}</p>"
        )
    elif report.suite:
        lines.append(f"<p>Every run of suite {esc(report.suite)} in this results folder</p>")
    lines.extend(f'<p class="mixed">Mixed: {esc(m)}</p>' for m in report.mixed)
    trust = report.trust.lines() if report.trust else []
    lines.extend(f'<p class="trust">{esc(line)}</p>' for line in trust)
    lines.append(
        f"<p>{report.tasks_compared} of {report.tasks_total} tasks compared; "
        f"{len(report.trials)} trials; spent ${report.spent_usd:.4f}; sandbox: "
        f"{esc(', '.join(report.sandbox) or '-')}</p>"
    )
    return "<header>" + "".join(lines) + "</header>"


def notes(report: Report) -> str:
    if not report.notes:
        return ""
    return (
        '<section id="notes"><h2>Notes</h2><ul>'
        + "".join(f"<li>{esc(n)}</li>" for n in report.notes)
        + "</ul></section>"
    )
