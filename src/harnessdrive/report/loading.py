"""Read a run's report back from a results folder."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.report.details import trial_details
from harnessdrive.report.scoreboard import Report, build_report
from harnessdrive.report.statistics import CONFIDENCE
from harnessdrive.report.trust_counting import TrustCounting, count_trusted
from harnessdrive.store.decisions_file import read_decisions
from harnessdrive.store.folder import check_for_reading
from harnessdrive.store.results import TrialResult
from harnessdrive.store.review import decisions
from harnessdrive.store.schema import RUN_SCHEMA, refuse_newer
from harnessdrive.store.store import Store
from harnessdrive.store.trust import TaskTrust, recorded_trust, trial_trust
from harnessdrive.tasks.models import VariantSpec


def list_runs(results: Path) -> list[dict[str, Any]]:
    """Every run manifest, newest first."""
    store = Store(results)
    runs = []
    if store.paths.runs.is_dir():
        for path in store.paths.runs.glob("*.json"):
            try:
                run = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            refuse_newer(run, RUN_SCHEMA, path)
            runs.append(run)
    return sorted(runs, key=lambda run: str(run.get("updated", "")), reverse=True)


@dataclass(frozen=True)
class View:
    """How a report decides: the options ``report`` and ``compare`` share."""

    accepted_only: bool = False
    margin: float | None = None
    confidence: float = CONFIDENCE
    all_tasks: bool = False
    """Count the tasks the audit marked untrusted or invalid too."""
    suite_trust: Mapping[str, TaskTrust] | None = None
    """Each task's trust by its audit now (``--suite``), for the trials of the same version of
    the task; None: the trust the runs recorded."""

    def counted(
        self,
        trials: Sequence[TrialResult],
        trust: Mapping[str, TaskTrust | None],
        unrun: Sequence[TaskTrust] = (),
    ) -> tuple[list[TrialResult], TrustCounting]:
        """The trials that count in this view, and what the audit left out."""
        if self.suite_trust is not None:
            trust = now_trusted(trials, trust, self.suite_trust)
            unrun = [self.suite_trust.get(item.task, item) for item in unrun]
        return count_trusted(
            trials,
            trust,
            all_tasks=self.all_tasks,
            unrun=unrun,
            source="run" if self.suite_trust is None else "suite",
        )


def load_report(
    results: Path, run_id: str | None = None, *, details: bool = False, view: View = View()
) -> Report:
    check_for_reading(results)
    runs = list_runs(results)
    if not runs:
        unreadable = sorted(Store(results).paths.runs.glob("*.json"))
        detail = f" (cannot read {unreadable[0]})" if unreadable else ""
        raise UserError(f"no runs recorded in {results}{detail}")
    run = runs[0] if run_id is None else _one_run(runs, run_id)
    results_list, trust = trials_with_trust(Store(results), run)
    unrun = [item for item in (recorded_trust(run) or {}).values() if item.left_out]
    results_list, counting = view.counted(results_list, trust, unrun)
    variants = [VariantSpec.model_validate(v).label for v in run.get("variants", [])]
    report = build_report(
        results_list,
        variants=variants,
        run_id=run.get("run_id"),
        suite=run.get("suite"),
        reviews=decisions(results_list, Store(results).paths.trials),
        accepted_only=view.accepted_only,
        margin=view.margin,
        confidence=view.confidence,
        trust=counting,
    )
    report = with_sequential_decisions(report, results, run.get("run_id"))
    return with_details(report, results, results_list) if details else report


def with_sequential_decisions(report: Report, results: Path, run_id: object) -> Report:
    """A run until decided: its anytime-valid decisions as notes, which every format shows
    (the scoreboard's own verdicts are those of a fixed design)."""
    if not isinstance(run_id, str):
        return report
    recorded = read_decisions(Store(results).paths.run_decisions(run_id))
    if recorded is None:
        return report
    return report.model_copy(update={"notes": (*report.notes, *recorded.lines())})


def load_folder_report(results: Path, *, details: bool = False, view: View = View()) -> Report:
    """The report of every run in a results folder together: each trial in the attempt the
    newest run that counted it counted."""
    trials, trust = folder_trials_trust(results)
    return report_of(results, trials, details=details, view=view, trust=trust)


def report_of(
    results: Path,
    trials: list[TrialResult],
    *,
    details: bool = False,
    view: View = View(),
    trust: Mapping[str, TaskTrust | None] | None = None,
) -> Report:
    """The report of ``trials``; with ``trust`` (each trial's, by trial id) the view leaves out
    the trials on tasks the audit marked untrusted or invalid."""
    counting = None
    if trust is not None:
        trials, counting = view.counted(trials, trust)
    suites = sorted({t.suite for t in trials})
    report = build_report(
        trials,
        suite=suites[0] if len(suites) == 1 else None,
        reviews=decisions(trials, Store(results).paths.trials),
        accepted_only=view.accepted_only,
        margin=view.margin,
        confidence=view.confidence,
        trust=counting,
    )
    return with_details(report, results, trials) if details else report


def folder_trials(results: Path, run_ids: Sequence[str] = ()) -> list[TrialResult]:
    """The counted trials of every run in ``results`` (or of the runs whose ids start with one
    of ``run_ids``), a trial counted by several runs taken from the newest, oldest run first."""
    return folder_trials_trust(results, run_ids)[0]


def folder_trials_trust(
    results: Path, run_ids: Sequence[str] = ()
) -> tuple[list[TrialResult], dict[str, TaskTrust | None]]:
    """:func:`folder_trials`, and each one's trust as the run it was taken from recorded it
    (None: that run recorded none)."""
    check_for_reading(results)
    runs = list_runs(results)
    if not runs:
        raise UserError(f"no runs recorded in {results}")
    if run_ids:
        runs = [_one_run(runs, prefix) for prefix in run_ids]
    store = Store(results)
    found: dict[str, TrialResult] = {}
    trust: dict[str, TaskTrust | None] = {}
    for run in reversed(runs):  # oldest first, so the newest run's attempt stays
        trials, recorded = trials_with_trust(store, run)
        for result in trials:
            found.pop(result.trial_id, None)
            found[result.trial_id] = result
        trust.update(recorded)
    return list(found.values()), trust


def trials_with_trust(
    store: Store, run: Mapping[str, Any]
) -> tuple[list[TrialResult], dict[str, TaskTrust | None]]:
    """:func:`run_trials`, and each one's task's trust as the run recorded it, by trial id."""
    trials = run_trials(store, run)
    recorded = recorded_trust(run)
    return trials, {t.trial_id: trial_trust(recorded, t) for t in trials}


def now_trusted(
    trials: Sequence[TrialResult],
    recorded: Mapping[str, TaskTrust | None],
    now: Mapping[str, TaskTrust],
) -> dict[str, TaskTrust | None]:
    """Each trial's trust by its task's audit now where that audit is of the version the trial
    ran; the recorded trust for the others."""
    found = dict(recorded)
    for trial in trials:
        current = now.get(trial.task)
        if current is not None and current.fingerprint == trial.task_fingerprint:
            found[trial.trial_id] = current
    return found


def with_details(report: Report, results: Path, trials: Sequence[TrialResult]) -> Report:
    return report.model_copy(update={"details": trial_details(results, trials)})


def run_trials(store: Store, run: Mapping[str, Any]) -> list[TrialResult]:
    """The trials a run manifest counted, each in the attempt it counted."""
    counted = run.get("attempts")
    if not isinstance(counted, dict):
        counted = {}
    return [
        r
        for t in run.get("trials", [])
        if (r := counted_attempt(store, t, run.get("run_id"), counted)) is not None
    ]


def _one_run(runs: list[dict[str, Any]], run_id: str) -> dict[str, Any]:
    matches = [r for r in runs if str(r.get("run_id", "")).startswith(run_id)]
    if len(matches) != 1:
        ids = [str(r.get("run_id")) for r in runs]
        what = "no run" if not matches else "more than one run"
        hint = did_you_mean(run_id, ids) if not matches else ""
        raise UserError(f"{what} matches {run_id!r}{hint}; runs here: {', '.join(ids)}")
    return matches[0]


def counted_attempt(
    store: Store, trial_id: str, run_id: object, counted: Mapping[str, object]
) -> TrialResult | None:
    """The attempt of a trial that a run counted.

    A run manifest names it (``counted``: trial id to attempt); one without (a run killed
    before it finished, or written before manifests did) counts this run's newest attempt, else
    the trial's latest one (a result recorded earlier in the same suite that the run resumed
    from). A trial the run resumed from a folder written before suite identities is found under
    its id of then, as the run found it (:meth:`Store.recorded_attempts`).
    """
    older = store.legacy_attempts(trial_id) if trial_id not in counted else None
    if older is not None and older[0] in counted:
        found_id, attempts = older  # counted then; a later run may have run it again since
    else:
        found_id, attempts = store.recorded_attempts(trial_id)
    attempt = counted.get(found_id)
    named = [r for r in attempts if r.attempt == attempt]
    if named:
        return named[-1]
    own = [r for r in attempts if r.run_id == run_id]
    if own:
        return own[-1]
    return attempts[-1] if attempts and attempt is None else None
