"""One truth for a cell: the verdict pytest reports is the outcome the results store keeps.

A cell passes only when the case function passed, the task's grader passed and the agent's run
finished (a crash or an interrupted run is never a pass, whatever it left behind). The outcome
is written back into the trial's ``result.json``, so ``harnessdrive report`` says what pytest
said; a cell the case passed but the machinery did not is failed in pytest with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harnessdrive.store.lock import ResultsLock
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store

BROKEN_RUNS = frozenset({"crashed", "interrupted"})
"""Statuses of a run that did not finish: graded or not, never a pass."""


@dataclass(frozen=True)
class CellVerdict:
    outcome: str
    """The outcome stored for the trial: pass only when pytest passes the cell."""
    why: str | None
    """Why a cell the case function passed is failed anyway (None when it is not)."""


def cell_verdict(result: TrialResult, case: str) -> CellVerdict:
    """``case`` is the case function's verdict: pass, fail or error."""
    # The grader's own word: the trial's outcome may already carry an earlier case verdict.
    grader = result.grading.outcome if result.grading is not None else result.outcome
    if case != "pass":
        # A failed assertion, or a case that raised: pytest fails the cell, so does the store
        # (a tampered or ungraded trial keeps the grader's more telling word).
        return CellVerdict(grader if grader in ("tampered", "not_graded") else "fail", None)
    if result.status in BROKEN_RUNS:
        agent = result.agent
        detail = agent.error or agent.hint or f"exit code {agent.exit_code}"
        return CellVerdict(
            "fail" if grader == "pass" else grader,
            f"{result.variant_label}: the agent's run {result.status}: {detail}",
        )
    if grader != "pass":
        error = result.grading.error if result.grading is not None else None
        reason = f" ({error})" if error else ""
        return CellVerdict(
            grader, f"{result.variant_label}: the task's grader says {grader}{reason}"
        )
    return CellVerdict("pass", None)


def with_case_verdict(
    result: TrialResult, case: str, note: str | None
) -> tuple[TrialResult, CellVerdict]:
    """``result`` carrying the cell's verdict (outcome, ``case_passed`` and the note)."""
    verdict = cell_verdict(result, case)
    metrics = {**result.metrics, "case_passed": 1.0 if case == "pass" else 0.0}
    if case == "error":
        metrics["case_error"] = 1.0
    else:
        metrics.pop("case_error", None)
    update: dict[str, object] = {"outcome": verdict.outcome, "metrics": metrics}
    why = note or verdict.why
    if why:
        update["note"] = f"case: {why}"[:500]
    return result.revised(**update), verdict


def record_case_verdict(
    results: Path, result: TrialResult, case: str, note: str | None
) -> tuple[TrialResult, CellVerdict]:
    """Write the cell's verdict into the trial's record in ``results``."""
    final, verdict = with_case_verdict(result, case, note)
    if final != result:
        store = Store(results)
        try:
            with ResultsLock(store.paths.lock):
                store.record(final)
        finally:
            store.close()
    return final, verdict
