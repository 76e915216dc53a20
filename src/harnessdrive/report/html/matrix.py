"""Per-arm views: the facts of each arm (version, time, tokens, lines), the matrix of each
harness's arms against their control, the false-claims table and each task's title and
prompt."""

from __future__ import annotations

from collections.abc import Sequence

from harnessdrive.report.html.text import esc
from harnessdrive.report.html.trial_view import anchors
from harnessdrive.report.scoreboard import HarnessRow, Report
from harnessdrive.report.statistics import Comparison


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], css: str = "") -> str:
    heading = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{css}"><thead><tr>{heading}</tr></thead><tbody>{body}</tbody></table>'


def _arm(variant: str) -> str:
    return f'<a href="#trials" data-arm="{esc(variant)}">{esc(variant)}</a>'


def _number(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:g}{unit}"


def arm_facts(report: Report) -> str:
    rows = [
        [
            _arm(row.variant),
            esc(", ".join(row.versions) or "-"),
            _number(None if row.median_minutes is None else round(row.median_minutes, 2), " min"),
            _number(None if row.median_tokens is None else round(row.median_tokens)),
            _number(row.median_lines_changed),
            f"${row.total_cost:.4f}",
        ]
        for row in report.harnesses
    ]
    if not rows:
        return ""
    return (
        '<section id="arms"><h2>Arms</h2>'
        + _table(
            ["Arm", "Version", "Median time", "Median tokens", "Median lines changed", "Spent"],
            rows,
        )
        + "</section>"
    )


def _control(row: HarnessRow, rows: Sequence[HarnessRow]) -> HarnessRow | None:
    """The arm this one varies: the same harness with the longest name that is a prefix of
    this one's in ``+``-separated parts (``claude+min`` for ``claude+min+terse``)."""
    parts = row.variant.split("+")
    for cut in range(len(parts) - 1, 0, -1):
        name = "+".join(parts[:cut])
        found = next((r for r in rows if r.variant == name and r.harness == row.harness), None)
        if found is not None:
            return found
    return None


def _verdict(first: str, second: str, comparisons: Sequence[Comparison]) -> str:
    for c in comparisons:
        if {c.first, c.second} == {first, second}:
            diff = "" if c.difference is None else f" ({c.difference * 100:+.0f} points)"
            sign = 1 if c.first == first else -1
            if c.difference is not None:
                diff = f" ({sign * c.difference * 100:+.0f} points)"
            return esc(c.verdict + diff)
    return "not compared"


def matrix(report: Report) -> str:
    rows = report.harnesses
    harnesses = list(dict.fromkeys(r.harness for r in rows))
    parts = []
    for harness in harnesses:
        own = [r for r in rows if r.harness == harness]
        if len(own) < 2:
            continue
        lines = []
        for row in own:
            control = _control(row, own)
            lines.append(
                [
                    _arm(row.variant),
                    "-" if row.pass_rate is None else f"{row.pass_rate * 100:.0f}%",
                    "-" if row.cost_per_pass is None else f"${row.cost_per_pass:.4f}",
                    _arm(control.variant) if control else "(control)",
                    _verdict(row.variant, control.variant, report.statistics.comparisons)
                    if control
                    else "-",
                ]
            )
        parts.append(
            f"<h3>{esc(harness)}</h3>"
            + _table(["Arm", "Rate", "$/pass", "Against", "Verdict"], lines, "matrix")
        )
    if not parts:
        return ""
    return (
        '<section id="matrix"><h2>Matrix</h2><p>Each harness\'s arms (effort rungs, treatments) '
        "against the arm they vary.</p>" + "".join(parts) + "</section>"
    )


def false_claims(report: Report) -> str:
    where = anchors(report)
    rows = [
        [
            f'<a href="#{where[t.trial_id]}">{esc(t.task)} · {esc(t.variant)} r{t.repetition}</a>',
            esc(c.kind),
            esc(c.subject or "-"),
            esc(c.text),
        ]
        for t in report.trials
        for c in t.claims
        if not c.holds
    ]
    if not rows:
        return ""
    return (
        '<section id="claims"><h2>False claims</h2><p>Claims in an agent\'s final message that '
        "the grading contradicts.</p>"
        + _table(["Trial", "Claim", "About", "Sentence"], rows)
        + "</section>"
    )


def task_prompts(report: Report) -> str:
    prompts: dict[str, str] = {}
    details = {d.trial_id: d for d in report.details}
    for trial in report.trials:
        detail = details.get(trial.trial_id)
        if trial.task not in prompts and detail and detail.record and detail.record.prompt:
            prompts[trial.task] = detail.record.prompt
    items = "".join(
        f'<details class="task"><summary><b>{esc(t.task)}</b>: {esc(t.title)}</summary>'
        f"<pre>{esc(prompts.get(t.task, '(no prompt recorded)'))}</pre></details>"
        for t in report.tasks
    )
    if not items:
        return ""
    return f'<section id="prompts"><h2>Task prompts</h2>{items}</section>'
