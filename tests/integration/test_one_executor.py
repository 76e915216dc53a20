"""``check`` and mining validation run every trial as a job on the one executor they are given.

A counting executor, registered through the ``harnessdrive_executors`` hook like any plugin's,
wraps the local one and records every job it is handed. Had the self-test or mining graded
anything on a thread pool of its own, a case or a test run would be missing from what it saw.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest

from harnessdrive.checking.suite import self_test
from harnessdrive.executors.interface import ExecutorEntry
from harnessdrive.executors.local import create_local
from harnessdrive.mining.mine import MineOptions, mine
from harnessdrive.plugins.hookspecs import hookimpl
from harnessdrive.plugins.manager import plugin_manager, reset_plugins
from harnessdrive.protocols.known_change import KnownChange
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.testing.suites import write_suite
from harnessdrive.trial.job import JobResult, TrialJob, WorkerSettings
from tests.conftest import add_task


class CountingExecutor:
    """The local executor, with a record of every job submitted to it."""

    name = "counting"

    def __init__(self, settings: WorkerSettings) -> None:
        self.inner = create_local(settings)
        self.jobs: list[tuple[TrialJob, tuple[int, ...]]] = []
        self.results: dict[str, TrialResult] = {}
        """What each job that ran handed back, by key."""
        self._guard = threading.Lock()

    @property
    def sandbox(self) -> str:
        return self.inner.sandbox

    @property
    def kept(self) -> Path | None:
        return self.inner.kept

    @property
    def keys(self) -> list[str]:
        return sorted(job.key for job, _ in self.jobs)

    def submit(self, job: TrialJob, *, priority: tuple[int, ...] = ()) -> Future[JobResult]:
        with self._guard:
            self.jobs.append((job, priority))
        future = self.inner.submit(job, priority=priority)
        future.add_done_callback(lambda done: self._note(job.key, done))
        return future

    def stop(self) -> None:
        self.inner.stop()

    def close(self) -> None:
        self.inner.close()

    def _note(self, key: str, future: Future[JobResult]) -> None:
        if not future.cancelled():
            with self._guard:
                self.results[key] = future.result().result


class CountingPlugin:
    def __init__(self) -> None:
        self.made: list[CountingExecutor] = []

    @hookimpl
    def harnessdrive_executors(self) -> list[ExecutorEntry]:
        return [ExecutorEntry(name="counting", create=self.create)]

    def create(self, settings: WorkerSettings) -> CountingExecutor:
        executor = CountingExecutor(settings)
        self.made.append(executor)
        return executor


@pytest.fixture
def counting() -> Iterator[CountingPlugin]:
    plugin = CountingPlugin()
    manager = plugin_manager()
    manager.register(plugin, name="counting-executor")
    try:
        yield plugin
    finally:
        manager.unregister(plugin)
        reset_plugins()


def test_every_self_test_case_is_a_job_on_the_given_executor(
    tmp_path: Path, counting: CountingPlugin
) -> None:
    suite = load_suite(write_suite(tmp_path, [add_task()]))
    (report,) = self_test(
        suite, logs=tmp_path / "logs", jobs=2, sandbox="none", executor="counting"
    )
    (executor,) = counting.made
    # The noop run changed nothing: the untouched repository is that same input, graded once.
    assert executor.keys == ["check:add:noop", "check:add:reference"]
    assert {case.name: case.outcome for case in report.cases} == {
        "untouched": "fail",
        "reference": "pass",
        "noop": "fail",
    }
    assert report.ok
    # Each case's verdict is the one its job handed back.
    assert executor.results["check:add:reference"].outcome == "pass"
    untouched = next(case for case in report.cases if case.name == "untouched")
    noop = executor.results["check:add:noop"]
    assert noop.rounds[-1].diff.files_changed == 0
    assert untouched.outcome == noop.outcome == "fail"


def test_the_untouched_repository_is_a_known_change_job_when_noop_left_a_change(
    tmp_path: Path, counting: CountingPlugin
) -> None:
    # The setup leaves a file in the agent's workspace, so the noop run's change is not empty.
    task = add_task(setup=["echo built > built.txt"])
    suite = load_suite(write_suite(tmp_path, [task]))
    (report,) = self_test(suite, logs=tmp_path / "logs", sandbox="none", executor="counting")
    (executor,) = counting.made
    assert executor.keys == ["check:add:noop", "check:add:reference", "check:add:untouched"]
    assert executor.results["check:add:noop"].rounds[-1].diff.files_changed > 0
    harnesses = {job.key: job.harness for job, _ in executor.jobs}
    assert isinstance(harnesses["check:add:untouched"], KnownChange)
    untouched = next(case for case in report.cases if case.name == "untouched")
    assert untouched.outcome == executor.results["check:add:untouched"].outcome == "fail"
    assert untouched.files is None  # graded as no change at all
    assert (tmp_path / "logs" / "add" / "untouched" / "grade-tests.log").is_file()


TEST_COMMAND = "{python} -m unittest discover -s tests -q"


def unit_test(name: str, body: str) -> str:
    return (
        f"import unittest\n\nimport calc\n\n\nclass {name}(unittest.TestCase):\n"
        f"    def test_it(self):\n        {body}\n"
    )


def test_every_mining_test_run_is_a_job_on_the_given_executor(
    tmp_path: Path, counting: CountingPlugin
) -> None:
    repo = RepoBuilder(tmp_path / "calc")
    calc = "def add(a, b):\n    return a - b\n"
    repo.commit("Start", {"calc.py": calc, "tests/test_none.py": unit_test("No", "pass")})
    sha = repo.commit(
        "Fix add",
        {
            "calc.py": calc.replace("a - b", "a + b"),
            "tests/test_add.py": unit_test("Add", "self.assertEqual(calc.add(2, 3), 5)"),
        },
    )
    repo.checkout()
    repo.close()
    options = MineOptions(
        repo=tmp_path / "calc",
        since="2000-01-01",
        test_command=TEST_COMMAND,
        validate=True,
        jobs=2,
        output=tmp_path / "suite",
    )
    result = mine(options, sandbox="none", python=sys.executable, executor="counting")
    assert [task.commit for task in result.summary.tasks] == [sha]
    (executor,) = counting.made
    task = result.summary.tasks[0].id
    runs = ["after", "focused", "focused_after", "focused_again"]
    assert executor.keys == sorted(["mine:head", *(f"mine:{task}:{run}" for run in runs)])
    assert sorted(executor.results) == executor.keys
    assert all(isinstance(job.harness, KnownChange) for job, _ in executor.jobs)
    # Each recorded run is what its job's grading found.
    recorded_runs = [(run, rec) for run, rec in result.summary.tasks[0].check if rec is not None]
    assert sorted(run for run, _ in recorded_runs) == runs
    for run, recorded in recorded_runs:
        verdict = executor.results[f"mine:{task}:{run}"].rounds[-1].grading
        assert verdict is not None and verdict.hidden is not None
        assert recorded.exit_code == (0 if verdict.hidden.succeeded else verdict.hidden.exit_code)
    # HEAD goes first; then the commit's steps in judging order.
    priorities = {job.key: priority for job, priority in executor.jobs}
    assert priorities["mine:head"] < priorities[f"mine:{task}:focused"]
    order = ["focused", "after", "focused_again", "focused_after"]
    assert [priorities[f"mine:{task}:{run}"] for run in order] == sorted(
        priorities[f"mine:{task}:{run}"] for run in order
    )
    logs = tmp_path / "suite" / "logs" / task
    assert all((logs / run / "grade-tests.log").is_file() for run in runs)
