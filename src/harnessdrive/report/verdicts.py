"""The statistics in words, for the terminal and markdown (the HTML page says the same in its
own sections): the rates with their intervals, every comparison with its verdict and why, cost,
and the tasks whose verdicts are not stable."""

from __future__ import annotations

import math

from harnessdrive.report.scoreboard import Report
from harnessdrive.report.statistics import (
    ArmStats,
    Bounds,
    Comparison,
    MeasureDifference,
    Statistics,
)


def statistics_lines(report: Report) -> list[str]:
    found = report.statistics
    lines = []
    rated = [a for a in found.arms if a.interval is not None and a.pass_rate is not None]
    if rated:
        level = f"{found.confidence * 100:.3g}%"
        lines.append(
            f"Pass rates (the mean of per-task rates) with {level} intervals over tasks and "
            "their repeats: " + "; ".join(_rate(a) for a in rated) + "."
        )
    if found.comparisons:
        lines.append(family_line(found))
        lines.extend(f"  {c.first} against {c.second}: {describe(c)}" for c in found.comparisons)
    costed = [a for a in found.arms if a.cost_per_trial is not None]
    if costed and any(a.cost_per_trial for a in costed):
        lines.append(
            "Cost a task (t interval over tasks), and a pass: "
            + "; ".join(_cost(a) for a in costed)
            + "."
        )
    if found.flaky:
        for reason in sorted({f.reason for f in found.flaky}):
            rows = [f for f in found.flaky if f.reason == reason]
            shown = [f"{f.task} ({f.variant}, {f.passes:g} of {f.trials})" for f in rows[:8]]
            more = f" and {len(rows) - 8} more" if len(rows) > 8 else ""
            lines.append(f"Flaky, {reason}: {', '.join(shown)}{more}.")
    return lines


def family_line(found: Statistics) -> str:
    many = found.family > 1
    holm = (
        f"Holm over these {found.family}, each interval at its step's level"
        if many
        else "one comparison"
    )
    baselines = [a.variant for a in found.arms if a.baseline and a.variant not in found.compared]
    aside = f"; baselines ({', '.join(baselines)}) are calibration lines" if baselines else ""
    margin = f"; equivalent means within ±{found.margin * 100:.0f} points" if found.margin else ""
    accepted = "; only passes a person accepted count" if found.accepted_only else ""
    return f"Paired by task ({holm}{aside}{margin}{accepted}):"


def _rate(arm: ArmStats) -> str:
    text = f"{arm.variant} {(arm.pass_rate or 0) * 100:.0f}% ({_percent(arm.interval)})"
    return text + (" baseline" if arm.baseline else "")


def _percent(bounds: Bounds | None) -> str:
    if bounds is None:
        return "-"
    return f"{bounds.low * 100:.0f}–{bounds.high * 100:.0f}%"


def dollars(value: float, sign: bool = False) -> str:
    """``$0.41``, ``$0.0042``, ``-$1.20``: cents, or two significant digits below a dime."""
    text = f"{abs(value):.2f}" if abs(value) >= 0.1 or value == 0 else f"{abs(value):.2g}"
    prefix = ("-" if value < 0 else "+" if sign else "") if value else ""
    return f"{prefix}${text}"


def _cost(arm: ArmStats) -> str:
    text = f"{arm.variant} {dollars(arm.cost_per_trial or 0)}"
    if arm.cost_interval:
        text += f" [{dollars(arm.cost_interval.low)}–{dollars(arm.cost_interval.high)}]"
    if arm.cost_per_pass is not None:
        text += f", {dollars(arm.cost_per_pass)} a pass"
        if arm.cost_per_pass_interval:
            bounds = arm.cost_per_pass_interval
            text += f" [{dollars(bounds.low)}–{dollars(bounds.high)}]"
    return text


def describe_measure(m: MeasureDifference) -> str:
    """``improvement x1.35 [x1.10, x1.66] over 4 tasks, p = 0.12`` (the ratio of the two arms'
    geometric mean improvement), or ``rule sorted +12 points [-3, +27] ...``."""
    if m.measure == "improvement":
        text = f"improvement x{math.exp(m.difference):.3g}"
        if m.interval:
            text += f" [x{math.exp(m.interval.low):.3g}, x{math.exp(m.interval.high):.3g}]"
    else:
        text = f"{m.measure} {m.difference * 100:+.0f} points"
        if m.interval:
            text += f" [{m.interval.low * 100:+.0f}, {m.interval.high * 100:+.0f}]"
    return text + f" over {m.tasks} tasks, p = {m.p_value:.2g}"


def describe(c: Comparison) -> str:
    """``better: +18 points [+6, +30] (98.3% interval, Tango's score) over 12 tasks, exact
    McNemar p = 0.004 (Holm 0.012), P(better) 0.99``; an inconclusive one says why."""
    if c.difference is None:
        return f"{c.verdict}: no task in common"
    text = f"{c.verdict}: {c.difference * 100:+.0f} points"
    if c.interval is not None:
        text += (
            f" [{c.interval.low * 100:+.0f}, {c.interval.high * 100:+.0f}]"
            f" ({c.confidence * 100:.3g}% interval, {c.interval_method})"
        )
    noun = "task" if len(c.tasks) == 1 else "tasks"
    text += f" over {len(c.tasks)} {noun}, {c.test} p = {c.p_value:.2g}"
    if c.p_error:
        text += f" ± {c.p_error:.1g}"
    if c.family > 1:
        text += f" (Holm {c.p_adjusted:.2g})"
    text += f", P(better) {c.p_better:.2f}"
    if c.unequal_repeats:
        text += "; unequal repeats: each task's repeats averaged, every task weighs the same"
    if c.cost_difference is not None and c.cost_difference != 0:
        text += f"; cost {dollars(c.cost_difference, sign=True)} a task"
        if c.cost_interval:
            text += (
                f" [{dollars(c.cost_interval.low, sign=True)}, "
                f"{dollars(c.cost_interval.high, sign=True)}]"
            )
    for measure in c.measures:
        text += f"; {describe_measure(measure)}"
    if c.reason:
        text += f"; inconclusive: {c.reason}"
    if c.settle:
        text += f"; {c.settle} (an estimate from this run)"
    return text
