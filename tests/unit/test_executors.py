"""The executor seam: the local thread pool's order, stop and close, and real trials through it."""

from __future__ import annotations

import pickle
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.errors import HarnessdriveError, PluginError
from harnessdrive.executors.local import LocalExecutor
from harnessdrive.executors.registry import create_executor, executor_entries
from harnessdrive.harnesses.registry import get_harness
from harnessdrive.tasks.loading import Task, load_suite
from harnessdrive.testing.suites import write_suite
from harnessdrive.trial.job import TrialJob, TrialSettings, WorkerSettings
from harnessdrive.trial.standalone import standalone_job
from tests.conftest import add_task
from tests.job_runners import HoldingRunner
from tests.waiting import wait_until

NO_SANDBOX = WorkerSettings(jobs=1, sandbox="none")


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return load_suite(write_suite(tmp_path, [add_task()])).tasks[0]


def job(task: Task, key: str, harness: str = "reference") -> TrialJob:
    return standalone_job(task, get_harness(harness), key=key)


@pytest.fixture
def recording() -> Iterator[HoldingRunner]:
    runner = HoldingRunner()
    yield runner
    runner.gate.set()


def test_waiting_jobs_start_lowest_priority_first_then_in_submission_order(
    task: Task, recording: HoldingRunner
) -> None:
    executor = LocalExecutor(NO_SANDBOX, run=recording)
    try:
        first = executor.submit(job(task, "hold"))
        assert recording.holding.wait(60)  # the one worker is busy: the rest must queue
        futures = [
            executor.submit(job(task, key), priority=priority)
            for key, priority in [("c", (3,)), ("a1", (1,)), ("b", (2, 0)), ("a2", (1,))]
        ]
        futures.append(executor.submit(job(task, "none")))  # () sorts before every tuple
        recording.gate.set()
        assert first.result(60).result.trial_id == "hold"
        assert [f.result(60).result.trial_id for f in futures] == ["c", "a1", "b", "a2", "none"]
    finally:
        executor.close()
    assert recording.started == ["hold", "none", "a1", "a2", "b", "c"]


def test_close_waits_for_every_job_removes_the_scratch_root_and_refuses_more(
    task: Task, recording: HoldingRunner
) -> None:
    executor = LocalExecutor(WorkerSettings(jobs=2, sandbox="none"), run=recording)
    root = executor.worker.paths.root
    assert root.is_dir()
    futures = [executor.submit(job(task, key)) for key in ("hold", "x", "y")]
    assert recording.holding.wait(60)
    closing = threading.Thread(target=executor.close)
    closing.start()
    wait_until(lambda: "y" in recording.started, "the queued jobs run before close returns")
    assert closing.is_alive()  # still waiting for the held job
    recording.gate.set()
    closing.join(60)
    assert not closing.is_alive()
    assert all(f.done() for f in futures)
    assert not root.exists()
    with pytest.raises(HarnessdriveError, match="closed"):
        executor.submit(job(task, "late"))


def test_a_real_trial_comes_back_with_its_files_and_touches_no_results_store(
    task: Task, tmp_path: Path
) -> None:
    executor = LocalExecutor(NO_SANDBOX)
    try:
        done = executor.submit(job(task, "ref")).result(300)
        assert (done.result.status, done.result.outcome) == ("completed", "pass")
        assert done.result.sandbox == "none" == executor.sandbox
        assert (done.artifacts / "prompt.md").read_text() == "Make the tests pass."
        assert b"calc.py" in (done.artifacts / "diff.patch").read_bytes()
        assert (done.artifacts / "transcript.json").is_file()
        assert (done.artifacts / "grade-tests.log").is_file()
    finally:
        executor.close()
    assert not done.artifacts.exists()  # the receiver takes them before closing
    assert not list(tmp_path.rglob("result.json"))  # nobody but a driver records


def test_stop_ends_the_running_trial_and_the_queued_one_interrupted(task: Task) -> None:
    executor = LocalExecutor(NO_SANDBOX)
    try:
        running = executor.submit(job(task, "asleep", harness="sleeper"))
        queued = executor.submit(job(task, "queued", harness="reference"))
        wait_until(
            lambda: any(executor.worker.paths.root.glob("artifacts/*/agent.stdout")),
            "the sleeper at work",
        )
        executor.stop()
        executor.stop()  # twice is fine
        stopped, never_started = running.result(120), queued.result(120)
        assert stopped.result.status == "interrupted"
        assert (stopped.artifacts / "agent.stdout").read_text().startswith("thinking")
        assert never_started.result.status == "interrupted"
        assert not (never_started.artifacts / "prompt.md").exists()
    finally:
        executor.close()


def test_the_local_executor_is_registered_by_name_and_an_unknown_one_is_refused() -> None:
    assert "local" in executor_entries()
    executor = create_executor("local", NO_SANDBOX)
    try:
        assert executor.name == "local"
    finally:
        executor.close()
    with pytest.raises(PluginError, match=r"no executor named 'nowhere'.*local"):
        create_executor("nowhere", NO_SANDBOX)


def test_a_setup_failure_names_its_log_where_the_receiver_will_record_it(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, [add_task(setup=["echo no dependencies; exit 3"])]))
    folder = tmp_path / "trial-folder"
    settings = TrialSettings(record_folder=folder)
    executor = LocalExecutor(NO_SANDBOX)
    try:
        done = executor.submit(
            standalone_job(suite.tasks[0], get_harness("reference"), key="s", settings=settings)
        ).result(300)
        assert done.result.status == "could_not_run"
        assert done.result.note == f"see {folder / 'setup.log'}"
        assert "no dependencies" in (done.artifacts / "setup.log").read_text()
    finally:
        executor.close()


def test_a_job_and_the_worker_settings_travel_by_pickle(task: Task) -> None:
    """Nothing live of the driver rides along, so another process can run the job."""
    for harness in ("reference", "claude", "command"):
        sent = standalone_job(task, get_harness(harness), key=f"k-{harness}")
        received = pickle.loads(pickle.dumps(sent))
        assert (received.key, received.task.fingerprint) == (sent.key, task.fingerprint)
        assert received.identity == sent.identity
    settings = WorkerSettings(jobs=3, sandbox="none", hidden=(task.folder,))
    assert pickle.loads(pickle.dumps(settings)) == settings


def test_cancel_ends_one_running_trial_and_leaves_the_others_running(task: Task) -> None:
    executor = LocalExecutor(WorkerSettings(jobs=2, sandbox="none"))
    try:
        ended = executor.submit(job(task, "ended", harness="sleeper"))
        other = executor.submit(job(task, "other", harness="sleeper"))
        queued = executor.submit(job(task, "queued", harness="reference"))
        wait_until(
            lambda: len(list(executor.worker.paths.root.glob("artifacts/*/agent.stdout"))) == 2,
            "both sleepers at work",
        )
        executor.cancel(queued)  # waiting: it never starts
        assert queued.cancelled()
        executor.cancel(ended)
        stopped = ended.result(120)
        assert stopped.result.status == "interrupted"
        assert (stopped.artifacts / "agent.stdout").read_text().startswith("thinking")
        assert not other.done() and not executor.worker.stop.stopped
        executor.cancel(ended)  # finished: nothing happens
    finally:
        executor.stop()
        executor.close()
    assert other.result(120).result.status == "interrupted"  # by the stop, not the cancel
