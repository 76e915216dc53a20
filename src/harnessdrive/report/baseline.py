"""An arm now against the same arm in an earlier results folder or pytest session
(``harnessdrive compare A --baseline EARLIER``): the comparison a regression gate makes, so the
command line and CI's gate give the same verdict."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.errors import UserError
from harnessdrive.pytest_plugin.gates import compare_sessions, session_trials
from harnessdrive.pytest_plugin.session_report import is_session
from harnessdrive.report.loading import folder_trials
from harnessdrive.report.stat_models import Comparison
from harnessdrive.store.results import TrialResult


def trials_of(folder: Path) -> list[TrialResult]:
    """Every trial of a results folder, or of every store of a pytest session."""
    if not folder.is_dir():
        raise UserError(f"{folder} is not a results folder or a pytest session")
    return session_trials(folder) if is_session(folder) else folder_trials(folder, ())


def compare_to_baseline(
    results: Path,
    baseline: Path,
    arm: str,
    *,
    baseline_arm: str | None = None,
    margin: float | None = None,
) -> Comparison:
    """``arm`` in ``results`` against ``baseline_arm`` (by default the same name) in
    ``baseline``, paired by task."""
    if results.resolve() == baseline.resolve():
        raise UserError(f"the baseline {baseline} is the results folder itself")
    now = trials_of(results)
    before = trials_of(baseline)
    if baseline_arm is not None and baseline_arm != arm:
        before = [
            t.revised(variant_label=arm) if t.variant_label == baseline_arm else t
            for t in before
            if t.variant_label != arm
        ]
    return compare_sessions(now, before, arm, baseline_name=baseline.name, margin=margin)
