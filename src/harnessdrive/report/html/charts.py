"""Charts as inline SVG, drawn here so the report needs no script library and no request."""

from __future__ import annotations

import math
from collections.abc import Sequence

from harnessdrive.report.html.text import attr, esc
from harnessdrive.report.statistics import ArmStats, RuleStats

PALETTE = ("#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477", "#66aa00")
WIDTH = 720
LABEL = 170


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _svg(name: str, height: int, body: Sequence[str], title: str) -> str:
    return (
        f'<svg class="chart" data-chart="{attr(name)}" role="img" viewBox="0 0 {WIDTH} {height}"'
        f' width="{WIDTH}" height="{height}">'
        f"<title>{esc(title)}</title>{''.join(body)}</svg>"
    )


def _line(kind: str, x1: float, y1: float, x2: float, y2: float) -> str:
    return f'<line class="{kind}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>'


def _x_axis(left: int, right: int, y: int, ticks: Sequence[tuple[float, str]]) -> list[str]:
    parts = [f'<line x1="{left}" y1="{y}" x2="{right}" y2="{y}" class="axis"/>']
    for position, label in ticks:
        parts.append(
            f'<line x1="{position:.1f}" y1="{y}" x2="{position:.1f}" y2="{y + 4}" class="axis"/>'
        )
        parts.append(
            f'<text x="{position:.1f}" y="{y + 16}" text-anchor="middle">{esc(label)}</text>'
        )
    return parts


def pass_rate_chart(arms: Sequence[ArmStats]) -> str:
    """One bar per arm, its Wilson interval as a whisker."""
    row, top = 28, 10
    height = top + row * len(arms) + 30
    scale = WIDTH - LABEL - 30
    body: list[str] = []
    for i, arm in enumerate(arms):
        y = top + i * row
        rate = arm.pass_rate or 0.0
        body.append(
            f'<text x="{LABEL - 8}" y="{y + 17}" text-anchor="end">{esc(arm.variant)}</text>'
        )
        body.append(
            f'<rect x="{LABEL}" y="{y + 5}" width="{rate * scale:.1f}" height="16" '
            f'fill="{colour(i)}" opacity="0.75"><title>{esc(arm.variant)}: '
            f"{rate * 100:.0f}%</title></rect>"
        )
        if arm.interval:
            low, high = LABEL + arm.interval.low * scale, LABEL + arm.interval.high * scale
            mid = y + 13
            body.append(_line("whisker", low, mid, high, mid))
            body.append(_line("whisker", low, y + 7, low, y + 19))
            body.append(_line("whisker", high, y + 7, high, y + 19))
    ticks = [(LABEL + f * scale, f"{f * 100:.0f}%") for f in (0, 0.25, 0.5, 0.75, 1)]
    body.extend(_x_axis(LABEL, LABEL + scale, top + row * len(arms) + 4, ticks))
    return _svg("pass-rate", height, body, "Pass rate by arm, with 95% intervals")


def cost_chart(arms: Sequence[ArmStats]) -> str:
    """Pass rate against cost a task: each arm's estimate (circle) with its pass-rate interval
    (vertical whisker) and cost interval (horizontal whisker), the frontier through the
    estimates. A noisy arm keeps its point; its noise is drawn, not held against it."""
    left, right, top, bottom = 60, WIDTH - 20, 15, 260
    height = bottom + 40
    placed = [a for a in arms if a.cost_per_trial is not None and a.pass_rate is not None]
    highest = max((a.cost_high or a.cost_per_trial or 0.0 for a in placed), default=0.0)
    most = round_ticks(highest)[-1] if highest > 0 else 1.0

    def x(cost: float) -> float:
        return left + (right - left) * max(cost, 0.0) / most

    def y(rate: float) -> float:
        return bottom - (bottom - top) * rate

    body = [f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" class="axis"/>']
    for f in (0, 0.5, 1):
        # 0% sits just above its line, clear of the cost axis's first tick label below it.
        at = y(f) + 4 if f else y(f) - 3
        body.append(f'<text x="{left - 6}" y="{at:.1f}" text-anchor="end">{f * 100:.0f}%</text>')
    measured = any((a.cost_high or a.cost_per_trial or 0.0) > 0 for a in placed)
    if measured:
        ticks = [(x(v), _dollars(v)) for v in round_ticks(most)]
        body.extend(_x_axis(left, right, bottom, ticks))
    else:
        body.extend(_x_axis(left, right, bottom, [(x(0.0), "$0")]))
        body.append(
            f'<text x="{(left + right) / 2:.0f}" y="{(top + bottom) / 2:.0f}" '
            'text-anchor="middle" class="empty">no cost measured</text>'
        )
    frontier = sorted((a for a in placed if a.on_frontier), key=lambda a: a.cost_per_trial or 0.0)
    if frontier:
        points = " ".join(
            f"{x(a.cost_per_trial or 0.0):.1f},{y(a.pass_rate or 0.0):.1f}" for a in frontier
        )
        body.append(f'<polyline class="frontier" points="{points}"/>')
    labels = LabelPlacer(right)
    for i, arm in enumerate(arms):
        if arm not in placed:
            continue
        cx, cy = x(arm.cost_per_trial or 0.0), y(arm.pass_rate or 0.0)
        if arm.interval:
            body.append(_line("link", cx, y(arm.interval.low), cx, y(arm.interval.high)))
        if arm.cost_interval:
            low, high = x(arm.cost_interval.low), x(arm.cost_interval.high)
            body.append(_line("link", low, cy, high, cy))
        body.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="{colour(i)}"><title>'
            f"{esc(arm.variant)}: {(arm.pass_rate or 0) * 100:.0f}% of tasks at "
            f"${arm.cost_per_trial or 0:.4f} a task</title></circle>"
        )
        lx, ly = labels.place(cx + 8, cy - 6, arm.variant)
        body.append(f'<text x="{lx:.1f}" y="{ly:.1f}" class="label">{esc(arm.variant)}</text>')
    body.append(
        f'<text x="{(left + right) / 2:.0f}" y="{bottom + 34}" text-anchor="middle">'
        "cost a task (USD)</text>"
        f'<text x="14" y="{(top + bottom) / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {(top + bottom) / 2:.0f})">pass rate</text>'
    )
    return _svg(
        "pareto", height, body, "Pass rate against cost a task, with intervals and the frontier"
    )


def curve_chart(curves: Sequence[tuple[str, int, Sequence[float], bool]]) -> str:
    """Each improvement trial's best value by round as an improvement factor over its baseline
    (log scale, up is better). ``curves``: (label, colour index, values from the baseline on,
    whether lower values are better)."""
    left, right, top, bottom = 70, WIDTH - 20, 15, 220
    ratios = [[_gain(c[0], v, lower) for v in c] for _, _, c, lower in curves]
    span = max((abs(r) for rs in ratios for r in rs), default=1.0) or 1.0
    rounds = max((len(c) for _, _, c, _ in curves), default=2) - 1 or 1

    def x(i: int) -> float:
        return left + (right - left) * i / rounds

    def y(r: float) -> float:
        return (top + bottom) / 2 - (bottom - top) / 2 * r / span

    body = [f'<line x1="{left}" y1="{y(0):.1f}" x2="{right}" y2="{y(0):.1f}" class="axis"/>']
    for value, label in (
        (span, f"x{2**span:.3g} better"),
        (0.0, "baseline"),
        (-span, f"x{2**span:.3g} worse"),
    ):
        body.append(
            f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end" class="tick">'
            f"{label}</text>"
        )
    legend: list[str] = []
    for (label, index, _, _), series in zip(curves, ratios, strict=True):
        points = " ".join(f"{x(i):.1f},{y(r):.1f}" for i, r in enumerate(series))
        body.append(
            f'<polyline class="curve" stroke="{colour(index)}" points="{points}" '
            f'data-final="{series[-1]:.6g}"><title>{esc(label)}</title></polyline>'
        )
        legend.append(
            f'<span class="key"><i style="background:{colour(index)}"></i>{esc(label)}</span>'
        )
    ticks = [(x(i), str(i)) for i in range(rounds + 1)]
    body.extend(_x_axis(left, right, bottom, ticks))
    body.append(
        f'<text x="{(left + right) / 2:.0f}" y="{bottom + 34}" text-anchor="middle">'
        "round (0 = baseline)</text>"
    )
    chart = _svg("improvement", bottom + 40, body, "Improvement by round, against the baseline")
    return chart + '<p class="legend">' + " ".join(legend) + "</p>"


def _gain(baseline: float, value: float, lower_is_better: bool) -> float:
    """log2 of how many times better ``value`` is than ``baseline`` (0 when not measurable)."""
    if baseline <= 0 or value <= 0:
        return 0.0
    ratio = math.log2(value / baseline)
    return -ratio if lower_is_better else ratio


def round_ticks(high: float, count: int = 4) -> list[float]:
    """Ticks from 0 at a round step (1, 2 or 5 times a power of ten) that reach ``high``."""
    if high <= 0:
        return [0.0]
    raw = high / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    n = math.ceil(high / step - 1e-9)
    return [round(step * k, 12) for k in range(n + 1)]


def _dollars(value: float) -> str:
    return "$0" if value == 0 else f"${value:g}"


class LabelPlacer:
    """Places text labels so that none overlaps another: a label that would collide moves
    down a line at a time (widths estimated from an 11px font)."""

    def __init__(self, right: float) -> None:
        self.right = right
        self.boxes: list[tuple[float, float, float, float]] = []

    def place(self, x: float, y: float, text: str) -> tuple[float, float]:
        width = 6.6 * len(text) + 2
        if x + width > self.right:
            x = max(0.0, self.right - width)
        while any(self._hits((x, y - 11, x + width, y + 2), box) for box in self.boxes):
            y += 13
        self.boxes.append((x, y - 11, x + width, y + 2))
        return x, y

    @staticmethod
    def _hits(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def rules_chart(arms: Sequence[ArmStats]) -> str:
    """Per-rule pass rates of a differential grader, one bar per arm within each rule."""
    rules = sorted({r.rule for a in arms for r in a.rules})
    bar, gap, top = 12, 10, 10
    group = bar * len(arms) + gap
    height = top + group * len(rules) + 30
    scale = WIDTH - LABEL - 30
    body: list[str] = []
    for g, rule in enumerate(rules):
        y0 = top + g * group
        body.append(
            f'<text x="{LABEL - 8}" y="{y0 + group / 2:.0f}" text-anchor="end">{esc(rule)}</text>'
        )
        for i, arm in enumerate(arms):
            found: RuleStats | None = next((r for r in arm.rules if r.rule == rule), None)
            if found is None:
                continue
            y = y0 + i * bar
            body.append(
                f'<rect x="{LABEL}" y="{y}" width="{found.rate * scale:.1f}" height="{bar - 2}" '
                f'fill="{colour(i)}"><title>{esc(arm.variant)}: {found.passed:g} of '
                f"{found.cases:g}</title></rect>"
            )
    ticks = [(LABEL + f * scale, f"{f * 100:.0f}%") for f in (0, 0.5, 1)]
    body.extend(_x_axis(LABEL, LABEL + scale, top + group * len(rules), ticks))
    return _svg("rules", height, body, "Pass rate per rule")
