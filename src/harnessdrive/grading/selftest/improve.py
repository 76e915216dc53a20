"""The self-test of an improvement task: its gate and its objective, from two trials.

The ``noop`` agent's trial measures the untouched repository: its baseline must pass the gate
(or the trial never ran a round) and nothing may improve. The ``reference`` agent applies the
task's reference overlays one per round: each must be kept, and the trial must pass. The
baseline's spread (its samples' half range, relative to their median) is reported, with a
warning when ``min_improvement`` lies inside it.
"""

from __future__ import annotations

from harnessdrive.grading.selftest.cases import CheckCase, TaskCheck
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import Task


def improve_report(task: Task, results: dict[str, TrialResult]) -> TaskCheck:
    """The check of ``task`` from its ``noop`` and ``reference`` trials."""
    spec = task.spec.improve
    assert spec is not None
    report = TaskCheck(task=task.id)
    noop, reference = results["noop"], results["reference"]
    if noop.status == "could_not_run":
        why = noop.rounds[0].agent.error if noop.rounds else noop.note
        report.cases.append(CheckCase("untouched", "pass", "not_graded", why or ""))
        report.problems.append(f"the untouched repository cannot be the baseline: {why}")
        return report
    report.cases.append(CheckCase("untouched", "pass", "pass", _curve_text(noop)))
    kept_by_noop = noop.metrics.get("improve.rounds_kept", 0.0)
    report.cases.append(CheckCase("noop", "fail", noop.outcome, _curve_text(noop)))
    if noop.outcome != "fail" or kept_by_noop:
        report.problems.append(f"doing nothing should not improve, but got {noop.outcome}")
    overlays = min(len(spec.overlays), spec.rounds)
    kept = int(reference.metrics.get("improve.rounds_kept", 0.0))
    report.cases.append(CheckCase("reference", "pass", reference.outcome, _curve_text(reference)))
    if not spec.overlays:
        report.problems.append("no reference overlays ([improve] overlays)")
    elif reference.outcome != "pass" or kept != overlays:
        report.problems.append(
            f"the reference overlays should improve round by round ({overlays} kept and a "
            f"pass), but {kept} were kept and the trial got {reference.outcome}"
        )
    spread = noop.metrics.get("improve.baseline_spread")
    if spread is not None:
        report.notes.append(f"objective spread at the baseline: ±{spread:.1%}")
        if spread > 0 and spec.min_improvement <= spread:
            report.notes.append(
                f"warning: min_improvement {spec.min_improvement:g} lies inside the baseline's "
                f"spread (±{spread:.1%}); raise it or the repeats"
            )
    return report


def _curve_text(result: TrialResult) -> str:
    count = sum(name.startswith("improve.curve.") for name in result.metrics)
    curve = [result.metrics[f"improve.curve.{n}"] for n in range(count)]
    return "curve " + " -> ".join(f"{value:g}" for value in curve) if curve else ""
