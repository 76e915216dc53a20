"""Crash safety of the run driver: kill -9, then the same command again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.store.index import dump
from harnessdrive.store.store import Store
from harnessdrive.testing.suites import write_suite
from tests.conftest import GRADE_WITHOUT_RUNNER, add_task
from tests.trial_results import planned_folder
from tests.waiting import trials_under_way, wait_until

FIX = "sleep 0.4; printf 'def add(a, b):\\n    return a + b\\n' > calc.py"


def harnessdrive(*args: str) -> list[str]:
    return [sys.executable, "-m", "harnessdrive.cli", *args]


@pytest.mark.slow
def test_kill_9_then_the_same_command_finishes_and_repeats_nothing(tmp_path: Path) -> None:
    tasks = [add_task(f"t{i}", hidden={}, command=GRADE_WITHOUT_RUNNER) for i in range(4)]
    suite = write_suite(tmp_path, tasks)
    results = tmp_path / "results"
    command = harnessdrive(
        "run", str(suite), "--cmd", f"slow={FIX}", "--repeat", "2", "--results", str(results)
    )
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(
        lambda: len(list(results.glob("trials/**/result.json"))) >= 3 and trials_under_way(results),
        "three trials recorded and the next one under way",
        process=driver,
    )
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    recorded_before = {
        p.relative_to(results): p.read_bytes() for p in results.glob("trials/**/result.json")
    }
    for data in recorded_before.values():
        json.loads(data)  # never half-written
    in_flight = [json.loads(p.read_text())["trial_id"] for p in results.glob("inflight/*.json")]
    assert in_flight, "the kill should have caught a trial under way"

    finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert "already recorded; resuming" in finished.stderr
    store = Store(results)
    latest = store.all_latest()
    key = planned_folder(results, suite, "").name  # the suite's identity: <name>@<hash>
    assert sorted(r.trial_id for r in latest) == sorted(
        f"{key}/t{i}/slow/r{rep}" for i in range(4) for rep in (1, 2)
    )
    assert all(r.outcome == "pass" for r in latest)
    # Results recorded before the kill were not run again.
    for rel, data in recorded_before.items():
        assert (results / rel).read_bytes() == data
    # A trial in flight at the kill was recorded as interrupted, then run again (unless its
    # result was already written when the driver died).
    for trial in in_flight:
        if Path("trials", trial, "result.json") in recorded_before:
            continue
        previous = results / "trials" / trial / "previous" / "1" / "result.json"
        assert json.loads(previous.read_text())["status"] == "interrupted"
        assert store.latest(trial).attempt == 2  # type: ignore[union-attr]
    assert not list((results / "inflight").glob("*.json"))
    before = dump(store.db)
    store.rebuild_index()
    assert dump(store.db) == before


BAD_INPUTS = [
    (["run", "{missing}"], "suite not found"),
    (["run", "{suite}", "--harness", "nope"], "unknown harness 'nope'"),
    (["run", "{suite}", "--repeat", "0"], "repeat count must be at least 1, not 0 (--repeat)"),
    (["run", "{unknown_key}"], "unknown key 'grade.comand'"),
    (["run", "{bad_repo}"], "repo path does not exist"),
    (["run", "{suite}", "--jobs", "0"], "--jobs must be at least 1"),
    (["report", "--results", "{missing}"], "no results folder"),
    (["run", "{suite}", "--sandbox", "docker"], "--sandbox must be auto, bwrap or none"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUTS)
def test_bad_input_is_one_line_exit_2_and_touches_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    suite = write_suite(tmp_path, [add_task("good")])
    broken = write_suite(tmp_path, [add_task("bad", extra={"grade": {"comand": "x"}})], name="k")
    no_repo = write_suite(tmp_path, [add_task("r", extra={"repo": {"path": "gone"}})], name="r")
    results = tmp_path / "results"
    results.mkdir()
    (results / "keep.txt").write_text("recorded before")
    paths = {
        "missing": str(tmp_path / "missing"),
        "suite": str(suite),
        "unknown_key": str(broken),
        "bad_repo": str(no_repo),
    }
    argv = [a.format(**paths) for a in args]
    if argv[0] == "run":
        argv += ["--results", str(results)]
    out = subprocess.run(harnessdrive(*argv), capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert "Traceback" not in out.stderr
    assert sorted(p.name for p in results.iterdir()) == ["keep.txt"]
