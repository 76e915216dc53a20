"""Gates across sessions: the session fails (and CI with it) when an arm regressed against a
named earlier session, falls below a pass rate, or leaves the Pareto frontier.

A project declares its gates with the ``pytest_harnessdrive_gates(config)`` hook in a
``conftest.py``, returning :func:`expect_no_regression`, :func:`expect_at_least` and
:func:`expect_pareto_contains` gates. They are checked at the end of the session, on the
controller, with the comparison model of ``harnessdrive report`` and ``compare``
(``stats/decisions.py``): a regression is the verdict ``worse`` of the arm now against the same
arm in the baseline session, paired by case, with the gate's margin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.report.scoreboard import Report, build_report, finished
from harnessdrive.report.stat_models import Comparison
from harnessdrive.report.verdicts import describe
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store

GateKind = Literal["no_regression", "at_least", "pareto_contains"]


@dataclass(frozen=True)
class Gate:
    kind: GateKind
    arm: str
    """The arm as the report names it (its variant label, or a variant table's ``name``)."""
    baseline: str | None = None
    """The earlier session (its folder name, or a prefix of it) a regression is judged against."""
    margin: float | None = None
    rate: float | None = None

    def __str__(self) -> str:
        if self.kind == "no_regression":
            margin = f", margin={self.margin:g}" if self.margin is not None else ""
            return f"expect_no_regression({self.arm!r}, baseline={self.baseline!r}{margin})"
        if self.kind == "at_least":
            return f"expect_at_least({self.arm!r}, {self.rate:g})"
        return f"expect_pareto_contains({self.arm!r})"


def expect_no_regression(arm: str, *, baseline: str, margin: float | None = None) -> Gate:
    """Fail the session when ``arm`` is ``worse`` than in the session ``baseline``: the verdict
    ``harnessdrive compare`` gives the two, paired by case (``margin`` as ``--margin``)."""
    if margin is not None and not 0 < margin < 1:
        raise UserError(f"expect_no_regression: margin is between 0 and 1, not {margin}")
    return Gate("no_regression", arm, baseline=baseline, margin=margin)


def expect_at_least(arm: str, rate: float) -> Gate:
    """Fail the session when ``arm``'s pass rate (the report's, a mean over cases) is below
    ``rate``."""
    if not 0 <= rate <= 1:
        raise UserError(f"expect_at_least: a rate is between 0 and 1, not {rate}")
    return Gate("at_least", arm, rate=rate)


def expect_pareto_contains(arm: str) -> Gate:
    """Fail the session when ``arm`` is not on the report's frontier of pass rate and cost."""
    return Gate("pareto_contains", arm)


@dataclass(frozen=True)
class GateResult:
    gate: Gate
    passed: bool
    why: str


def session_trials(folder: Path) -> list[TrialResult]:
    """Every trial a plugin session recorded, over all its stores (``main``, ``gw0``, ...)."""
    found: list[TrialResult] = []
    for trials in sorted(folder.glob("*/trials")):
        store = Store(trials.parent)
        try:
            store.sync_index()
            found += store.all_latest()
        finally:
            store.close()
    return found


def find_session(results_root: Path, name: str) -> Path:
    """The session folder ``name`` names (its full name or a unique prefix)."""
    sessions = sorted(p.name for p in results_root.iterdir()) if results_root.is_dir() else []
    sessions = [s for s in sessions if not s.startswith(".")]
    matches = [s for s in sessions if s == name] or [s for s in sessions if s.startswith(name)]
    if len(matches) != 1:
        what = "no session" if not matches else "more than one session"
        raise UserError(
            f"{what} in {results_root} matches the baseline {name!r}"
            f"{did_you_mean(name, sessions) if not matches else ''}"
        )
    return results_root / matches[0]


def compare_sessions(
    current: Sequence[TrialResult],
    baseline: Sequence[TrialResult],
    arm: str,
    *,
    baseline_name: str,
    margin: float | None = None,
) -> Comparison:
    """``arm`` now against ``arm`` in the baseline session, paired by case: the comparison
    ``harnessdrive report`` makes of the two as arms of one report."""
    before_arm = f"{arm}@{baseline_name}"
    now = [t for t in current if t.variant_label == arm and finished(t)]
    before = [
        t.revised(variant_label=before_arm, trial_id=f"{baseline_name}/{t.trial_id}")
        for t in baseline
        if t.variant_label == arm and finished(t)
    ]
    for trials, where in ((now, "this session"), (before, f"the session {baseline_name}")):
        if not trials:
            raise UserError(f"no finished trial of the arm {arm!r} in {where}")
    report = build_report([*now, *before], variants=[arm, before_arm], pooled=True, margin=margin)
    found = report.statistics.between(arm, before_arm)
    if found is None:  # a baseline harness is compared only when nothing else ran: here, never
        raise UserError(f"{arm!r} and its baseline were not compared (a calibration agent)")
    return found


def check_gates(
    gates: Sequence[Gate], report: Report, trials: Sequence[TrialResult], results_root: Path
) -> list[GateResult]:
    """Each gate's result on this session (its report and trials)."""
    outcomes = []
    arms = {row.variant: row for row in report.statistics.arms}
    for gate in gates:
        if gate.kind == "no_regression":
            assert gate.baseline is not None
            folder = find_session(results_root, gate.baseline)
            found = compare_sessions(
                trials,
                session_trials(folder),
                gate.arm,
                baseline_name=folder.name,
                margin=gate.margin,
            )
            outcomes.append(GateResult(gate, found.verdict != "worse", describe(found)))
            continue
        row = arms.get(gate.arm)
        if row is None or row.pass_rate is None:
            known = sorted(arms)
            raise UserError(
                f"{gate}: no arm {gate.arm!r} in this session{did_you_mean(gate.arm, known)}"
            )
        if gate.kind == "at_least":
            assert gate.rate is not None
            shown = f"pass rate {row.pass_rate:.2f}"
            if row.interval is not None:
                shown += f" [{row.interval.low:.2f}, {row.interval.high:.2f}]"
            outcomes.append(GateResult(gate, row.pass_rate >= gate.rate, shown))
        else:
            frontier = report.statistics.frontier
            outcomes.append(
                GateResult(
                    gate,
                    gate.arm in frontier,
                    f"the frontier is {', '.join(frontier) or 'empty'}",
                )
            )
    return outcomes
