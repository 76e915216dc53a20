"""The run driver as a front end other than the CLI uses it: it stops the run itself, owns the
signals, and finds the run recorded as before (manifest, trial folders)."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

from harnessdrive.running.plan import make_plan
from harnessdrive.running.recording import adopt_artifacts
from harnessdrive.running.run import RunDriver, RunOptions
from harnessdrive.store.manifest import RunManifest
from harnessdrive.tasks.loading import load_suite
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task
from tests.waiting import descendants_running, trials_under_way, wait_until

MANIFEST_KEYS = [
    "schema",
    "run_id",
    "suite",
    "suite_folder",
    "suite_id",
    "suite_version",
    "harnessdrive_version",
    "variants",
    "repeat",
    "jobs",
    "created",
    "updated",
    "finished",
    "trials",
    "attempts",
    "trust",  # added at the end: older readers ignore it
]


def test_a_front_end_stops_the_run_itself_and_its_signals_stay_its_own(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, [add_task()]))
    results = tmp_path / "results"
    plan = make_plan(suite, (VariantSpec(harness="sleeper"), VariantSpec(harness="reference")), 1)
    driver = RunDriver(plan, RunOptions(results=results, sandbox="none"))
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    during = {}

    def front_end() -> None:
        # Both of the sleeper's sleeps: it has printed its line and is at work.
        sleeping = ["sleep", "86400"]
        wait_until(lambda: len(descendants_running(os.getpid(), sleeping)) == 2, "the sleeper")
        assert trials_under_way(results)
        during.update({sig: signal.getsignal(sig) for sig in before})
        driver.stop()

    stopper = threading.Thread(target=front_end)
    stopper.start()
    summary = driver.run()
    stopper.join()
    assert during == before  # the driver installed no handler of its own
    assert summary.interrupted
    (stopped,) = summary.trials  # the reference trial after it never started
    assert stopped.status == "interrupted"
    folder = results / "trials" / stopped.trial_id
    assert (folder / "agent.stdout").read_text().startswith("thinking")
    assert (folder / "prompt.md").is_file()
    assert not list(results.glob("inflight/*.json"))


def test_the_run_manifest_keeps_the_schema_2_fields_in_order_with_trust_last(
    tmp_path: Path,
) -> None:
    suite = load_suite(write_suite(tmp_path, [add_task()]))
    plan = make_plan(suite, (VariantSpec(harness="reference", name="ref"),), 1)
    summary = RunDriver(plan, RunOptions(results=tmp_path / "results", sandbox="none")).run()
    raw = json.loads((tmp_path / "results" / "runs" / f"{summary.run_id}.json").read_text())
    assert list(raw) == MANIFEST_KEYS
    assert raw["schema"] == "harnessdrive-run-2"
    assert raw["variants"] == [{"harness": "reference", "name": "ref"}]
    assert raw["attempts"] == {summary.trials[0].trial_id: 1}
    assert raw["finished"] is not None
    again = RunManifest.model_validate(raw)
    assert again.variants == plan.variants


def test_files_a_worker_hands_back_never_replace_what_only_the_store_writes(
    tmp_path: Path,
) -> None:
    staged, folder = tmp_path / "staged", tmp_path / "trial"
    (staged / "rounds" / "2").mkdir(parents=True)
    (staged / "rounds" / "2" / "diff.patch").write_text("round 2")
    (staged / "agent.stdout").write_text("out")
    (staged / "result.json").write_text('{"forged": true}')
    (staged / "previous").mkdir()
    secret = tmp_path / "secret"
    secret.write_text("not for the results")
    os.symlink(secret, staged / "transcript.json")
    (staged / "cost.json").write_text("new")
    folder.mkdir()
    (folder / "cost.json").write_text("kept")
    adopt_artifacts(staged, folder)
    assert sorted(p.name for p in folder.iterdir()) == ["agent.stdout", "cost.json", "rounds"]
    assert (folder / "rounds" / "2" / "diff.patch").read_text() == "round 2"
    assert (folder / "cost.json").read_text() == "kept"
    left = sorted(p.name for p in staged.iterdir())
    assert left == ["cost.json", "previous", "result.json", "transcript.json"]
    assert secret.read_text() == "not for the results"
