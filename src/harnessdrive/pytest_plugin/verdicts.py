"""The case function's verdict, combined with the task grader's into the trial's outcome and
written back to the store: a failed assertion fails the trial even when the grader passed it."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.store.lock import ResultsLock
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store


def combined(grader: str, case: str) -> str:
    if case == "fail":
        return "fail"
    if case == "error":
        return "not_graded"  # the case could not evaluate: never a pass
    return grader


def record_case_verdict(
    results: Path, folder: Path, result: TrialResult, case: str, note: str | None
) -> TrialResult:
    outcome = combined(result.outcome, case)
    if result.status != "completed":
        return result
    metrics = {**result.metrics, "case_passed": 1.0 if case == "pass" else 0.0}
    update: dict[str, object] = {"outcome": outcome, "metrics": metrics}
    if note:
        update["note"] = f"case: {note}"[:500]
    final = result.model_copy(update=update)
    store = Store(results)
    try:
        with ResultsLock(store.paths.lock):
            store.record(final)
    finally:
        store.close()
    return final
