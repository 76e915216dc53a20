"""A report counts the attempts its run counted, also those recorded before suite identities."""

from __future__ import annotations

import json
from pathlib import Path

from harnessdrive.report.loading import load_report
from harnessdrive.store.schema import RUN_SCHEMA
from harnessdrive.store.store import Store
from tests.trial_results import trial_result

NEW_ID = "s@0000abcd/t/a/r1"
OLD_ID = "s/t/a/r1"


def write_run(results: Path, run_id: str, trials: list[str], attempts: dict[str, int]) -> None:
    manifest = {
        "schema": RUN_SCHEMA,
        "run_id": run_id,
        "suite": "s",
        "variants": [{"harness": "a"}],
        "updated": run_id,
        "trials": trials,
        "attempts": attempts,
    }
    (results / "runs").mkdir(parents=True, exist_ok=True)
    (results / "runs" / f"{run_id}.json").write_text(json.dumps(manifest))


def test_a_run_that_resumed_an_old_trial_shows_it_even_after_a_later_run_ran_it_again(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path)
    store.record(
        trial_result("t", "a", trial_id=OLD_ID, run_id="old", status="completed", outcome="fail")
    )
    write_run(tmp_path, "resumed", [NEW_ID], {OLD_ID: 1})
    shown = load_report(tmp_path, "resumed")
    assert [(t.trial_id, t.outcome) for t in shown.trials] == [(OLD_ID, "fail")]

    # A later run records the trial under its id of today; the first report keeps what it counted.
    store.record(
        trial_result(
            "t",
            "a",
            trial_id=NEW_ID,
            run_id="later",
            status="completed",
            outcome="pass",
            suite_id="s@0000abcd",
        )
    )
    write_run(tmp_path, "later", [NEW_ID], {NEW_ID: 1})
    store.close()
    assert [(t.trial_id, t.outcome) for t in load_report(tmp_path, "resumed").trials] == [
        (OLD_ID, "fail")
    ]
    assert [(t.trial_id, t.outcome) for t in load_report(tmp_path, "later").trials] == [
        (NEW_ID, "pass")
    ]
