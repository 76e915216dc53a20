"""The statistics in words, for the terminal and markdown: each arm against the best one, and
the tasks whose verdicts are not stable."""

from __future__ import annotations

from harnessdrive.report.scoreboard import Report
from harnessdrive.report.statistics import ArmStats, Comparison


def versus_best_lines(report: Report) -> list[str]:
    found = report.statistics
    lines = []
    rated = [a for a in found.arms if a.interval is not None and a.pass_rate is not None]
    if rated:
        lines.append(
            "Pass rates with Wilson's 95% interval, counting tasks: "
            + "; ".join(
                f"{a.variant} {a.pass_rate * 100:.0f}% ({_bounds(a)})"  # type: ignore[operator]
                for a in rated
            )
            + "."
        )
    if found.versus_best:
        lines.append(
            f"Against the best ({found.best}), paired by task "
            "(harnessdrive compare gives the table):"
        )
        lines.extend(f"  {c.first}: {describe(c)}" for c in found.versus_best)
    if found.flaky:
        shown = [f"{f.task} ({f.variant}, {f.passes:g} of {f.trials})" for f in found.flaky[:8]]
        more = f" and {len(found.flaky) - 8} more" if len(found.flaky) > 8 else ""
        lines.append(f"Flaky: {', '.join(shown)}{more}.")
    return lines


def _bounds(arm: ArmStats) -> str:
    if arm.interval is None:
        return "-"
    return f"{arm.interval.low * 100:.0f}-{arm.interval.high * 100:.0f}%"


def describe(c: Comparison) -> str:
    """``worse: -0.50 [-0.83, -0.17] over 12 tasks, sign test p=0.031``."""
    if c.difference is None:
        return f"{c.verdict}: no task in common"
    text = f"{c.verdict}: {c.difference:+.2f}"
    if c.interval is not None:
        text += f" [{c.interval.low:+.2f}, {c.interval.high:+.2f}]"
    noun = "task" if len(c.tasks) == 1 else "tasks"
    text += f" over {len(c.tasks)} {noun}, {c.test} p={c.p_value:.3g}"
    if c.p_adjusted != c.p_value:
        text += f" (Holm {c.p_adjusted:.3g})"
    if c.verdict == "not enough tasks":
        text += f"; a verdict needs {c.min_tasks}"
    elif c.verdict == "no evidence" and c.tasks_needed:
        text += f"; about {c.tasks_needed} tasks would show a difference this size"
    return text
