"""The differential parts of the scoreboard: per-rule scores, shrunk counterexamples grouped by
the rules they break, and the agents' checked claims ("confident and wrong")."""

from __future__ import annotations

import json
from collections import defaultdict

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from harnessdrive.grading.differential.results import counterexamples_in
from harnessdrive.report.scoreboard import Report, TrialRow

RATE_PREFIX, RATE_SUFFIX = "rule.", ".rate"
EXAMPLES_SHOWN = 3


def rule_rates(trial: TrialRow) -> dict[str, float]:
    """A differential trial's pass rate per rule bucket, from its metrics."""
    return {
        name[len(RATE_PREFIX) : -len(RATE_SUFFIX)]: value
        for name, value in trial.metrics.items()
        if name.startswith(RATE_PREFIX) and name.endswith(RATE_SUFFIX)
    }


def differential_parts(report: Report) -> list[RenderableType]:
    trials = [t for t in report.trials if rule_rates(t)]
    if not trials:
        return []
    parts: list[RenderableType] = [_rules_table(trials)]
    parts.extend(_counterexample_lines(trials))
    claims = [t for t in report.trials if t.claims]
    if claims:
        parts.append(_claims_table(claims))
    return parts


def _rules_table(trials: list[TrialRow]) -> Table:
    rules = sorted({rule for t in trials for rule in rule_rates(t)})
    table = Table(title="Per-rule scores (differential tasks)", title_justify="left")
    table.add_column("Task")
    table.add_column("Harness")
    for rule in rules:
        table.add_column(rule, justify="right")
    cells: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    for trial in trials:
        cells[(trial.task, trial.variant)].append(rule_rates(trial))
    for (task, variant), rates in sorted(cells.items()):
        row = []
        for rule in rules:
            values = [r[rule] for r in rates if rule in r]
            row.append(f"{100 * sum(values) / len(values):.0f}%" if values else "-")
        table.add_row(task, variant, *row)
    return table


def _counterexample_lines(trials: list[TrialRow]) -> list[RenderableType]:
    lines: list[RenderableType] = []
    for trial in trials:
        groups: dict[str, list[str]] = defaultdict(list)
        for example in counterexamples_in(trial.details):
            shown = json.dumps(example.input, sort_keys=True)
            said = example.error or json.dumps(example.actual)
            groups["+".join(example.rules) or "documented"].append(
                f"{shown} -> expected {json.dumps(example.expected)}, got {said}"
            )
        for rule, examples in sorted(groups.items()):
            head = f"{trial.task}/{trial.variant}: breaks {rule} ({len(examples)} shrunk)"
            lines.append(Text(head))
            lines.extend(Text(f"    {e}", style="dim") for e in examples[:EXAMPLES_SHOWN])
    return lines


def _claims_table(trials: list[TrialRow]) -> Table:
    table = Table(title="Claims in the agents' final messages", title_justify="left")
    for name in ("Task", "Harness", "Made", "True", "False", "False claims"):
        table.add_column(name, justify="right" if name in ("Made", "True", "False") else "left")
    for trial in trials:
        false = [c for c in trial.claims if not c.holds]
        table.add_row(
            trial.task,
            trial.variant,
            str(len(trial.claims)),
            str(len(trial.claims) - len(false)),
            str(len(false)),
            "; ".join(f"{c.kind}: {c.text}" for c in false)[:200],
        )
    return table
