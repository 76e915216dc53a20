"""Which passing trials still wait for a person's review, and recording each decision."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.store.folder import check_for_reading
from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import TrialResult
from harnessdrive.store.review import read_review
from harnessdrive.store.store import Store


def unreviewed_passes(results: Path) -> list[tuple[TrialPaths, TrialResult]]:
    """Every trial whose latest attempt passed and has no current review, in id order."""
    check_for_reading(results)
    store = Store(results)
    try:
        store.sync_index()
        latest = store.all_latest()
    finally:
        store.close()
    waiting = []
    for result in sorted(latest, key=lambda r: r.trial_id):
        paths = TrialPaths(results / "trials" / result.trial_id)
        if result.outcome == "pass" and read_review(paths, result) is None:
            waiting.append((paths, result))
    return waiting
