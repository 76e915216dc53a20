"""An arm now against the same arm in an earlier results folder or pytest session
(``harnessdrive compare A --baseline EARLIER``): the comparison a regression gate makes, so the
command line and CI's gate give the same verdict."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.errors import UserError
from harnessdrive.pytest_plugin.gates import compare_sessions, session_trials
from harnessdrive.pytest_plugin.session_report import is_session
from harnessdrive.report.loading import folder_trials_trust
from harnessdrive.report.stat_models import Comparison
from harnessdrive.report.trust_counting import TrustCounting, count_trusted, merged
from harnessdrive.store.results import TrialResult
from harnessdrive.store.trust import TaskTrust


def trials_of(folder: Path) -> list[TrialResult]:
    """Every trial of a results folder, or of every store of a pytest session."""
    return trials_and_trust(folder)[0]


def trials_and_trust(
    folder: Path,
) -> tuple[list[TrialResult], dict[str, TaskTrust | None] | None]:
    """:func:`trials_of`, and each trial's trust as its run recorded it; None for a pytest
    session (its cases have no audit)."""
    if not folder.is_dir():
        raise UserError(f"{folder} is not a results folder or a pytest session")
    if is_session(folder):
        return session_trials(folder), None
    return folder_trials_trust(folder, ())


def counted_pair(
    now: tuple[list[TrialResult], dict[str, TaskTrust | None] | None],
    before: tuple[list[TrialResult], dict[str, TaskTrust | None] | None],
    *,
    all_tasks: bool = False,
) -> tuple[list[TrialResult], list[TrialResult], TrustCounting | None]:
    """Both sides without the tasks the audit of either side left out (they pair on the same
    tasks), and what was left out; a side without trust records (a session) leaves none out."""
    sides = [
        count_trusted(trials, trust, all_tasks=all_tasks) if trust is not None else None
        for trials, trust in (now, before)
    ]
    left = [side[1].left_out if side is not None else () for side in sides]
    counted: list[tuple[list[TrialResult], TrustCounting | None]] = []
    for (trials, trust), others in ((now, left[1]), (before, left[0])):
        if trust is None:
            others_names = {item.task for item in others}
            kept = trials if all_tasks else [t for t in trials if t.task not in others_names]
            counted.append((kept, None))
        else:
            counted.append(count_trusted(trials, trust, all_tasks=all_tasks, also_left_out=others))
    (now_kept, now_counting), (before_kept, before_counting) = counted
    if now_counting is None or before_counting is None:
        counting = now_counting or before_counting
    else:
        counting = merged(now_counting, before_counting)
    return now_kept, before_kept, counting


def compare_to_baseline(
    results: Path,
    baseline: Path,
    arm: str,
    *,
    baseline_arm: str | None = None,
    margin: float | None = None,
    all_tasks: bool = False,
) -> Comparison:
    """``arm`` in ``results`` against ``baseline_arm`` (by default the same name) in
    ``baseline``, paired by task; a task the audit marked untrusted or invalid on either side
    is left out of both unless ``all_tasks``."""
    if results.resolve() == baseline.resolve():
        raise UserError(f"the baseline {baseline} is the results folder itself")
    now, before, counting = counted_pair(
        trials_and_trust(results), trials_and_trust(baseline), all_tasks=all_tasks
    )
    if baseline_arm is not None and baseline_arm != arm:
        before = [
            t.revised(variant_label=arm) if t.variant_label == baseline_arm else t
            for t in before
            if t.variant_label != arm
        ]
    found = compare_sessions(now, before, arm, baseline_name=baseline.name, margin=margin)
    return found.model_copy(update={"trust": counting})
