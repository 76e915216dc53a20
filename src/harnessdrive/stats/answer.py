"""The answer in words, the first line of every view: which arm is best, how sure, at what
cost, and what would settle what is still open.

"Best: X, 72% of tasks [61–81%], $0.41 a task; better than Y by 18 points [6–30], P(better)
0.99; Z inconclusive against X (p = 0.031, needs < 0.0167): about 4 more tasks would likely
settle it." """

from __future__ import annotations

from harnessdrive.stats.decisions import ArmSummary, Decisions, PairDecision

MOST_CLAUSES = 4
"""Comparisons named in the sentence; the rest are in the comparisons below it."""


def answer(decisions: Decisions) -> str:
    if not decisions.arms:
        return "No arm finished a task yet."
    anchor, opening = _opening(decisions)
    if anchor is None:
        return opening + "."
    order = {"better": 0, "worse": 0, "equivalent": 1, "inconclusive": 2}
    against = sorted(decisions.against(anchor.name), key=lambda c: order[c.verdict])
    clauses = [_clause(c, anchor.name) for c in against]
    shown = clauses[:MOST_CLAUSES]
    if len(clauses) > MOST_CLAUSES:
        shown.append(f"{len(clauses) - MOST_CLAUSES} more comparisons below")
    if not clauses:
        return opening + "; no other arm to compare it with."
    return opening + "; " + "; ".join(shown) + "."


def _opening(decisions: Decisions) -> tuple[ArmSummary | None, str]:
    compared = [a for a in decisions.arms if a.name in decisions.compared]
    if not compared:
        return None, "No arm to compare"
    anchor = compared[0]
    calibration = all(a.baseline for a in compared)
    if decisions.tied:
        names = " and ".join(decisions.tied)
        return anchor, f"Tied: {names}, {describe_rate(anchor)} each"
    if calibration:
        return anchor, (
            f"Baselines only, so no arm is best; top: {anchor.name}, {describe_rate(anchor)}"
        )
    if len(compared) == 1:
        return anchor, f"Only arm: {anchor.name}, {describe_rate(anchor)}"
    return anchor, f"Best: {anchor.name}, {describe_rate(anchor)}"


def describe_rate(arm: ArmSummary) -> str:
    """``72% of tasks [61–81%], $0.41 a task``."""
    text = (
        f"{arm.rate * 100:.0f}% of tasks "
        f"[{arm.interval.low * 100:.0f}–{arm.interval.high * 100:.0f}%]"
    )
    if arm.cost is not None:
        text += f", ${arm.cost.per_task:.2f} a task"
    return text


def _clause(c: PairDecision, anchor: str) -> str:
    other = c.second if c.first == anchor else c.first
    sign = 1 if c.first == anchor else -1
    if c.verdict in ("better", "worse") and c.difference is not None and c.interval:
        # The verdict is the first arm's; read from the anchor's side.
        word = c.verdict if sign == 1 else ("worse" if c.verdict == "better" else "better")
        low, high = sorted((sign * c.interval.low * 100, sign * c.interval.high * 100))
        p_better = c.p_better if sign == 1 else 1 - c.p_better
        return (
            f"{word} than {other} by {abs(c.difference) * 100:.0f} points "
            f"[{_points(low, high)}], P(better) {p_better:.2f}"
        )
    if c.verdict == "equivalent":
        return f"{other} equivalent to {anchor} (within the margin)"
    return f"{other} inconclusive against {anchor} ({c.reason}){settles(c)}"


def _points(low: float, high: float) -> str:
    if low >= 0:
        return f"{low:.0f}–{high:.0f}"
    if high <= 0:
        return f"{-high:.0f}–{-low:.0f}"
    return f"{low:+.0f} to {high:+.0f}"


def settles(c: PairDecision) -> str:
    """``: about 4 more tasks would likely settle it`` (an estimate), or nothing."""
    found = c.settle
    if found is None:
        return ""
    if found.more_tasks is not None:
        text = f": about {found.more_tasks} more tasks would likely settle it"
        if found.repeats is not None:
            text += f", or {found.repeats} repeats of each task"
        return text
    if found.repeats is not None:
        return f": {found.repeats} repeats of each task would likely settle it"
    return f": not even {found.most_tasks} more tasks would likely settle it"
