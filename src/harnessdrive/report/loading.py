"""Read a run's report back from a results folder."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.report.scoreboard import Report, build_report
from harnessdrive.store.folder import check_for_reading
from harnessdrive.store.results import TrialResult
from harnessdrive.store.review import decisions
from harnessdrive.store.schema import RUN_SCHEMA, refuse_newer
from harnessdrive.store.store import Store
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


def load_report(results: Path, run_id: str | None = None) -> Report:
    check_for_reading(results)
    runs = list_runs(results)
    if not runs:
        unreadable = sorted(Store(results).paths.runs.glob("*.json"))
        detail = f" (cannot read {unreadable[0]})" if unreadable else ""
        raise UserError(f"no runs recorded in {results}{detail}")
    if run_id is None:
        run = runs[0]
    else:
        matches = [r for r in runs if str(r.get("run_id", "")).startswith(run_id)]
        if len(matches) != 1:
            ids = [str(r.get("run_id")) for r in runs]
            what = "no run" if not matches else "more than one run"
            hint = did_you_mean(run_id, ids) if not matches else ""
            raise UserError(f"{what} matches {run_id!r}{hint}; runs here: {', '.join(ids)}")
        run = matches[0]
    store = Store(results)
    counted = run.get("attempts")
    if not isinstance(counted, dict):
        counted = {}
    results_list = [
        r
        for t in run.get("trials", [])
        if (r := counted_attempt(store, t, run.get("run_id"), counted)) is not None
    ]
    variants = [VariantSpec.model_validate(v).label for v in run.get("variants", [])]
    return build_report(
        results_list,
        variants=variants,
        run_id=run.get("run_id"),
        suite=run.get("suite"),
        reviews=decisions(results_list, store.paths.trials),
    )


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
