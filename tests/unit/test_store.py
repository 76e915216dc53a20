from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from harnessdrive.cli.flags import error_message
from harnessdrive.errors import LockedError, UserError
from harnessdrive.store.atomic import write_atomic
from harnessdrive.store.index import dump
from harnessdrive.store.inflight import SCRATCH_MARKER, InflightRecord
from harnessdrive.store.lock import ResultsLock
from harnessdrive.store.results import Cost, TrialResult
from harnessdrive.store.store import Store
from harnessdrive.tasks.models import VariantSpec


def result(trial_id: str = "s/t/v/r1", **changes: object) -> TrialResult:
    base = TrialResult(
        trial_id=trial_id,
        suite="s",
        task="t",
        task_fingerprint="f",
        variant=VariantSpec(harness="noop"),
        variant_label="noop",
        harness="noop",
        repetition=1,
        status="completed",
        outcome="fail",
        started="2026-01-01T00:00:00Z",
        finished="2026-01-01T00:00:01Z",
    )
    return base.model_copy(update=changes)


def test_result_json_round_trips_with_its_schema_version(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.record(result())
    data = json.loads((tmp_path / "trials/s/t/v/r1/result.json").read_text())
    assert data["schema"] == "harnessdrive-result-5"
    assert store.latest("s/t/v/r1") == result()


def test_atomic_write_leaves_no_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "a" / "file.json"
    write_atomic(target, "one")
    write_atomic(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["file.json"]


def test_new_attempt_moves_the_old_one_aside_and_spend_counts_both(tmp_path: Path) -> None:
    store = Store(tmp_path)
    paths, attempt = store.begin_attempt("s/t/v/r1")
    assert attempt == 1
    (paths.root / "agent.stdout").write_text("first try")
    store.record(result(status="interrupted", outcome="not_graded", cost=Cost(charged_usd=1.5)))
    paths, attempt = store.begin_attempt("s/t/v/r1")
    assert attempt == 2
    assert (paths.previous / "1" / "agent.stdout").read_text() == "first try"
    assert not paths.result.exists()
    store.record(result(attempt=2, cost=Cost(charged_usd=0.5)))
    assert store.charged_total() == pytest.approx(2.0)
    assert [r.attempt for r in store.all_latest()] == [2]


def test_rebuilt_index_equals_the_one_kept_while_recording(tmp_path: Path) -> None:
    store = Store(tmp_path)
    for task in ("a", "b"):
        store.begin_attempt(f"s/{task}/v/r1")
        store.record(result(f"s/{task}/v/r1", task=task, status="interrupted"))
        store.begin_attempt(f"s/{task}/v/r1")
        store.record(result(f"s/{task}/v/r1", task=task, attempt=2))
    before = dump(store.db)
    assert store.rebuild_index() == 4
    assert dump(store.db) == before


def _hold_lock(path: str, ready: multiprocessing.synchronize.Event) -> None:
    ResultsLock(Path(path)).acquire()
    ready.set()
    time.sleep(60)


def test_lock_refuses_a_second_live_run_and_takes_over_a_dead_ones(tmp_path: Path) -> None:
    lock_path = tmp_path / "lock"
    ready = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_lock, args=(str(lock_path), ready))
    holder.start()
    try:
        assert ready.wait(10)
        with pytest.raises(LockedError, match=f"process {holder.pid} is running"):
            ResultsLock(lock_path).acquire()
    finally:
        holder.kill()
        holder.join()
    lock = ResultsLock(lock_path).acquire()
    assert lock.took_over_from == holder.pid
    assert lock_path.read_text().strip() == str(os.getpid())
    lock.release()


def test_inflight_left_by_a_killed_driver_becomes_an_interrupted_result(tmp_path: Path) -> None:
    store = Store(tmp_path / "results")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / SCRATCH_MARKER).touch()
    not_ours = tmp_path / "not-ours"
    not_ours.mkdir()
    stub = result(status="interrupted", outcome="not_graded", cost=Cost(charged_usd=2.0))
    store.begin_attempt("s/t/v/r1")
    store.mark_inflight(
        InflightRecord(
            trial_id="s/t/v/r1",
            attempt=1,
            started="x",
            scratch=str(scratch),
            pid=1,
            interrupted=stub,
        )
    )
    store.mark_inflight(
        InflightRecord(
            trial_id="s/u/v/r1",
            attempt=1,
            started="x",
            scratch=str(not_ours),
            pid=1,
            interrupted=result("s/u/v/r1", task="u", status="interrupted", outcome="not_graded"),
        )
    )
    assert sorted(store.recover_inflight()) == ["s/t/v/r1", "s/u/v/r1"]
    recovered = store.latest("s/t/v/r1")
    assert recovered is not None and recovered.status == "interrupted"
    assert recovered.cost.charged_usd == 2.0
    assert not scratch.exists()
    assert not_ours.exists()  # never delete a folder we did not make
    assert not list((tmp_path / "results" / "inflight").iterdir())
    assert store.recover_inflight() == []


def test_a_result_of_schema_1_loads_and_one_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.record(result())
    path = tmp_path / "trials/s/t/v/r1/result.json"
    data = json.loads(path.read_text())
    for key in ("suite_id", "suite_folder", "suite_version", "harnessdrive_version"):
        data.pop(key)
    path.write_text(json.dumps({**data, "schema": "harnessdrive-result-1"}))
    assert store.latest("s/t/v/r1") == result(schema_="harnessdrive-result-1")
    path.write_text(json.dumps({**data, "schema": "harnessdrive-result-99", "later": 1}))
    with pytest.raises(UserError, match=r"newer harnessdrive.*harnessdrive-result-99"):
        store.sync_index()


def test_attempts_lists_previous_ones_first(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.begin_attempt("s/t/v/r1")
    store.record(result(status="interrupted", run_id="one"))
    store.begin_attempt("s/t/v/r1")
    store.record(result(attempt=2, run_id="two"))
    assert [(r.attempt, r.run_id) for r in store.attempts("s/t/v/r1")] == [(1, "one"), (2, "two")]


def test_an_index_migrated_by_a_newer_harnessdrive_is_refused_and_can_be_rebuilt(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path)
    store.record(result())
    store.db.execute("INSERT INTO _migrations VALUES ('_m999_later')")
    store.close()
    with pytest.raises(UserError, match=r"newer harnessdrive.*rebuild it from the trial") as caught:
        Store(tmp_path).sync_index()
    assert error_message(caught.value).endswith("(harnessdrive index --rebuild)")
    assert Store(tmp_path).rebuild_index() == 1


def test_a_trial_with_no_result_finds_the_one_recorded_before_suite_identities(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path)
    assert store.recorded("s@0000abcd/t/v/r1") is None
    store.record(result("s/t/v/r1", run_id="old"))
    assert store.recorded("s@0000abcd/t/v/r1") == result("s/t/v/r1", run_id="old")
    assert store.latest("s@0000abcd/t/v/r1") is None  # the exact lookup stays exact
    found_id, attempts = store.recorded_attempts("s@0000abcd/t/v/r1")
    assert (found_id, [r.run_id for r in attempts]) == ("s/t/v/r1", ["old"])
    assert store.recorded("other@0000abcd/t/v/r1") is None  # another suite's name

    # Once the trial has a result under its own id, that one counts.
    store.record(result("s@0000abcd/t/v/r1", run_id="new"))
    assert store.recorded("s@0000abcd/t/v/r1") == result("s@0000abcd/t/v/r1", run_id="new")


def test_a_result_with_an_identity_is_never_taken_for_another_suites_trial(tmp_path: Path) -> None:
    store = Store(tmp_path)
    # Under an id without "@" but recorded with an identity: not a folder of before identities.
    store.record(result("s/t/v/r1", suite_id="s@12345678"))
    assert store.recorded("s@0000abcd/t/v/r1") is None
    assert store.recorded_attempts("s@0000abcd/t/v/r1") == ("s@0000abcd/t/v/r1", [])


def test_what_a_run_records_is_written_in_this_schema_whatever_it_was_read_as(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path)
    old = TrialResult.model_validate(
        {**json.loads(result().to_json()), "schema": "harnessdrive-result-1"}
    )
    store.record(old)
    written = json.loads((tmp_path / "trials/s/t/v/r1/result.json").read_text())
    assert written["schema"] == "harnessdrive-result-5"


def test_an_inflight_record_of_a_newer_harnessdrive_is_refused_and_kept(tmp_path: Path) -> None:
    store = Store(tmp_path)
    record = InflightRecord(
        trial_id="s/t/v/r1",
        attempt=1,
        started="2026-01-01T00:00:00Z",
        scratch=str(tmp_path / "gone"),
        pid=1,
        interrupted=result(status="interrupted"),
    )
    path = store.mark_inflight(record)
    data = json.loads(path.read_text())
    data["interrupted"]["schema_"] = "harnessdrive-result-99"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match=r"newer harnessdrive.*harnessdrive-result-99"):
        store.recover_inflight()
    assert path.is_file() and store.latest("s/t/v/r1") is None
