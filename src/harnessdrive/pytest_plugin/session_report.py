"""At session end: the session's ``report.json`` and single-file HTML report, built from the
results every item carried on its ``user_properties`` (so xdist workers' cells are all there),
with the same builder and reporters as ``harnessdrive report``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessdrive.report.details import trial_details
from harnessdrive.report.mix import describe_mix
from harnessdrive.report.renderers import reporters
from harnessdrive.report.scoreboard import Report, build_report
from harnessdrive.store.results import TrialResult

HTML_REPORTER = "html"
SUITE = "pytest-evals"


@dataclass(frozen=True)
class Written:
    json_path: Path
    html_path: Path | None
    missing: str | None
    """Why there is no HTML report (no reporter of that name is registered)."""
    report: Report
    trials: tuple[TrialResult, ...]


def write_reports(folder: Path, session: str, properties: Sequence[dict[str, Any]]) -> Written:
    trials = [TrialResult.model_validate(p["result"]) for p in properties]
    labels = list(dict.fromkeys(t.variant_label for t in trials))
    # Each case has a matrix of its own: every cell counts for its arm (pooled), and each pair
    # of arms is compared on the cases both ran, by the same model as ``harnessdrive report``.
    report = build_report(trials, variants=labels, run_id=session, suite=SUITE, pooled=True)
    report = report.model_copy(update={"mixed": session_mix(trials)})
    # Each worker recorded into its own folder: the drill-down of a trial is read from its own.
    by_worker: dict[Path, list[TrialResult]] = {}
    for props, trial in zip(properties, trials, strict=True):
        by_worker.setdefault(_worker_folder(Path(str(props["folder"]))), []).append(trial)
    details = tuple(d for where, ts in by_worker.items() for d in trial_details(where, ts))
    report = report.model_copy(update={"details": details})
    folder.mkdir(parents=True, exist_ok=True)
    found = reporters()
    json_path = folder / "report.json"
    json_text = found["json"].render(report)
    json_path.write_text(str(json_text) + "\n")
    html = found.get(HTML_REPORTER)
    if html is None:
        return Written(
            json_path, None, f"no {HTML_REPORTER!r} reporter is registered", report, tuple(trials)
        )
    html_path = folder / "report.html"
    html_path.write_text(str(html.render(report)))
    return Written(json_path, html_path, None, report, tuple(trials))


def session_mix(trials: Sequence[TrialResult]) -> tuple[str, ...]:
    """The real mixes among a session's cells. Each cell is a run of its own and each case a
    suite of its own, so differing run ids and suites are the session's shape, not a mix;
    different sandboxes, harnessdrive versions or edited tasks are."""
    alike = [t.revised(suite=SUITE, suite_id=None, suite_version=None) for t in trials]
    return describe_mix(alike, None)


def _worker_folder(trial_folder: Path) -> Path:
    """The results folder that holds ``trial_folder`` (``<results>/trials/...``)."""
    for parent in trial_folder.parents:
        if parent.name == "trials":
            return parent.parent
    return trial_folder.parent


def is_session(folder: Path) -> bool:
    """A pytest session's folder: no results store itself, one per worker inside."""
    return not (folder / "trials").is_dir() and any(folder.glob("*/trials"))


def load_session_report(
    folder: Path,
    *,
    details: bool = False,
    margin: float | None = None,
    confidence: float | None = None,
    accepted_only: bool = False,
) -> Report:
    """The report of a pytest session read back from its stores (``harnessdrive report
    --results <session>``), counted as the session's own report counts it."""
    from harnessdrive.pytest_plugin.gates import session_trials

    trials = session_trials(folder)
    labels = list(dict.fromkeys(t.variant_label for t in trials))
    extra: dict[str, Any] = {} if confidence is None else {"confidence": confidence}
    report = build_report(
        trials,
        variants=labels,
        run_id=folder.name,
        suite=SUITE,
        pooled=True,
        margin=margin,
        accepted_only=accepted_only,
        **extra,
    )
    report = report.model_copy(update={"mixed": session_mix(trials)})
    if not details:
        return report
    by_worker: dict[Path, list[TrialResult]] = {}
    for worker in sorted(folder.glob("*/trials")):
        wanted = {t.trial_id for t in session_trials_of(worker.parent)}
        by_worker[worker.parent] = [t for t in trials if t.trial_id in wanted]
    found = tuple(d for where, ts in by_worker.items() for d in trial_details(where, ts))
    return report.model_copy(update={"details": found})


def session_trials_of(results: Path) -> list[TrialResult]:
    from harnessdrive.store.store import Store

    store = Store(results)
    try:
        return store.all_latest()
    finally:
        store.close()
