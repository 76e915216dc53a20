"""The driver survives its own failures: an exception (out of memory included) in a worker
thread or an executor becomes that trial's machinery failure, the run goes on, and a stopped
run ends even when a trial never comes back, leaving nothing in flight.

The failures are injected through fakes: job runners given to the local executor, and an
executor registered through the ``harnessdrive_executors`` hook like any plugin's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest

from harnessdrive.executors.interface import ExecutorEntry
from harnessdrive.executors.local import LocalExecutor
from harnessdrive.harnesses.registry import get_harness
from harnessdrive.plugins.hookspecs import hookimpl
from harnessdrive.plugins.manager import plugin_manager, reset_plugins
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunDriver, RunOptions
from harnessdrive.store.store import Store
from harnessdrive.tasks.loading import Task, load_suite
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.suites import write_suite
from harnessdrive.trial.job import JobResult, TrialJob, WorkerSettings
from harnessdrive.trial.standalone import standalone_job
from harnessdrive.trial.worker import WorkerContext
from tests.conftest import add_task
from tests.waiting import trials_under_way

Runner = Callable[[TrialJob, WorkerContext], JobResult]


def handed_back(job: TrialJob, worker: WorkerContext) -> JobResult:
    done = job.identity.model_copy(update={"status": "completed", "note": "ran"})
    return JobResult(done, worker.new_artifacts())


def out_of_memory(job: TrialJob, worker: WorkerContext) -> JobResult:
    raise MemoryError("cannot allocate 2 GiB")


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return load_suite(write_suite(tmp_path, [add_task()])).tasks[0]


def test_a_memory_error_in_a_worker_thread_is_that_trials_machinery_failure(task: Task) -> None:
    def runner(job: TrialJob, worker: WorkerContext) -> JobResult:
        return (out_of_memory if job.key == "boom" else handed_back)(job, worker)

    executor = LocalExecutor(WorkerSettings(jobs=1, sandbox="none"), run=runner)
    try:
        boom = executor.submit(standalone_job(task, get_harness("reference"), key="boom"))
        after = executor.submit(standalone_job(task, get_harness("reference"), key="after"))
        failed = boom.result(60).result
        # The one thread lived on: the next job ran.
        assert after.result(60).result.note == "ran"
    finally:
        executor.close()
    assert failed.status == "could_not_run"
    assert "MemoryError: cannot allocate 2 GiB" in (failed.agent.error or "")
    assert "infrastructure failure" in (failed.note or "")


class FakeExecutors:
    """Registers ``fake``: the local executor with ``runner``, or futures that fail outright."""

    def __init__(self) -> None:
        self.runner: Runner = handed_back
        self.raise_from_future: BaseException | None = None

    @hookimpl
    def harnessdrive_executors(self) -> list[ExecutorEntry]:
        return [ExecutorEntry(name="fake", create=self.create)]

    def create(self, settings: WorkerSettings) -> LocalExecutor:
        if self.raise_from_future is not None:
            return FailingExecutor(settings, self.raise_from_future)
        return LocalExecutor(settings, run=self.runner)


class FailingExecutor(LocalExecutor):
    """An executor whose every future fails with ``error`` (as a remote one's might)."""

    def __init__(self, settings: WorkerSettings, error: BaseException) -> None:
        super().__init__(settings, run=handed_back)
        self.error = error

    def submit(self, job: TrialJob, *, priority: tuple[int, ...] = ()) -> Future[JobResult]:
        future: Future[JobResult] = Future()
        future.set_exception(self.error)
        return future


@pytest.fixture
def fakes() -> Iterator[FakeExecutors]:
    plugin = FakeExecutors()
    plugin_manager().register(plugin, name="fake-executors")
    try:
        yield plugin
    finally:
        plugin_manager().unregister(plugin)
        reset_plugins()


def drive(tmp_path: Path, repeat: int = 2) -> tuple[RunDriver, Path]:
    suite = load_suite(write_suite(tmp_path, [add_task()]))
    results = tmp_path / "results"
    plan = make_plan(suite, (VariantSpec(harness="reference"),), repeat)
    return RunDriver(plan, RunOptions(results=results, sandbox="none", executor="fake")), results


def statuses(results: Path) -> list[str]:
    store = Store(results)
    try:
        return sorted(result.status for result in store.all_latest())
    finally:
        store.close()


def test_the_run_goes_on_past_a_trial_whose_thread_ran_out_of_memory(
    tmp_path: Path, fakes: FakeExecutors
) -> None:
    def runner(job: TrialJob, worker: WorkerContext) -> JobResult:
        first = job.identity.repetition == 1
        return (out_of_memory if first else handed_back)(job, worker)

    fakes.runner = runner
    driver, results = drive(tmp_path)
    summary = driver.run()
    assert sorted(t.status for t in summary.trials) == ["completed", "could_not_run"]
    assert statuses(results) == ["completed", "could_not_run"]
    assert trials_under_way(results) == []


def test_a_future_that_fails_is_recorded_as_that_trials_machinery_failure(
    tmp_path: Path, fakes: FakeExecutors
) -> None:
    fakes.raise_from_future = MemoryError("out of memory in the executor")
    driver, results = drive(tmp_path)
    summary = driver.run()
    assert [t.status for t in summary.trials] == ["could_not_run", "could_not_run"]
    assert "out of memory in the executor" in (summary.trials[0].agent.error or "")
    assert trials_under_way(results) == []


def test_a_second_stop_ends_a_run_whose_trial_never_comes_back(
    tmp_path: Path, fakes: FakeExecutors
) -> None:
    started, release = threading.Event(), threading.Event()

    def stuck(job: TrialJob, worker: WorkerContext) -> JobResult:
        started.set()
        release.wait(120)  # a thread wedged below the trial core
        return handed_back(job, worker)

    fakes.runner = stuck
    driver, results = drive(tmp_path, repeat=1)

    def front_end() -> None:
        assert started.wait(120)
        driver.stop()
        driver.stop()  # the second Ctrl-C

    stopper = threading.Thread(target=front_end)
    stopper.start()
    try:
        summary = driver.run()
    finally:
        release.set()
        stopper.join()
    assert summary.interrupted
    assert [t.status for t in summary.trials] == ["interrupted"]
    assert "never came back" in (summary.trials[0].note or "")
    assert trials_under_way(results) == []
