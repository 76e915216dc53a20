"""Read a run's report back from a results folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harnessdrive.errors import UserError
from harnessdrive.report.scoreboard import Report, build_report
from harnessdrive.store.store import Store
from harnessdrive.tasks.models import VariantSpec


def list_runs(results: Path) -> list[dict[str, Any]]:
    """Every run manifest, newest first."""
    store = Store(results)
    runs = []
    if store.paths.runs.is_dir():
        for path in store.paths.runs.glob("*.json"):
            try:
                runs.append(json.loads(path.read_text()))
            except (OSError, ValueError):
                continue
    return sorted(runs, key=lambda run: str(run.get("updated", "")), reverse=True)


def load_report(results: Path, run_id: str | None = None) -> Report:
    if not results.is_dir():
        raise UserError(f"no results folder at {results}")
    runs = list_runs(results)
    if not runs:
        raise UserError(f"no runs recorded in {results}")
    if run_id is None:
        run = runs[0]
    else:
        matches = [r for r in runs if str(r.get("run_id", "")).startswith(run_id)]
        if len(matches) != 1:
            known = ", ".join(str(r.get("run_id")) for r in runs)
            what = "no run" if not matches else "more than one run"
            raise UserError(f"{what} matches {run_id!r}; runs here: {known}")
        run = matches[0]
    store = Store(results)
    results_list = [r for t in run.get("trials", []) if (r := store.latest(t)) is not None]
    variants = [VariantSpec.model_validate(v).label for v in run.get("variants", [])]
    return build_report(
        results_list, variants=variants, run_id=run.get("run_id"), suite=run.get("suite")
    )
