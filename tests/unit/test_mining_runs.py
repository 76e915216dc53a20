"""Mining's test runs on the executor: oldest commit first, withdrawn once past the cut-off."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from harnessdrive.executors.local import LocalExecutor
from harnessdrive.mining.runs import RunQueue, grading_run, taken
from harnessdrive.mining.slots import NotNeeded
from harnessdrive.protocols.base import GivenChange
from harnessdrive.tasks.loading import Task, load_suite
from harnessdrive.testing.suites import write_suite
from harnessdrive.trial.job import TrialJob, WorkerSettings
from tests.conftest import add_task
from tests.job_runners import HoldingRunner
from tests.waiting import DEADLINE, wait_until


@pytest.fixture
def gated() -> Iterator[HoldingRunner]:
    runner = HoldingRunner()
    yield runner
    runner.gate.set()


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return load_suite(write_suite(tmp_path, [add_task()])).tasks[0]


def run(task: Task, key: str, tmp_path: Path) -> TrialJob:
    return grading_run(key, task, GivenChange(), tmp_path / "logs" / key)


def test_runs_start_oldest_commit_first_and_later_commits_are_withdrawn_at_the_cut_off(
    task: Task, gated: HoldingRunner, tmp_path: Path
) -> None:
    executor = LocalExecutor(WorkerSettings(jobs=1, sandbox="none"), run=gated)
    runs = RunQueue(executor)
    try:
        runs.submit(run(task, "hold", tmp_path), (-1, 0))
        gated.holding.wait(timeout=30)
        newer_later = runs.submit(run(task, "commit2-step1", tmp_path), (2, 1))
        older_later = runs.submit(run(task, "commit0-step2", tmp_path), (0, 2))
        older_first = runs.submit(run(task, "commit0-step1", tmp_path), (0, 1))
        runs.close_after(1)  # commit 2 is not needed: its waiting run goes
        with pytest.raises(NotNeeded):
            runs.submit(run(task, "commit3-step1", tmp_path), (3, 1))
        runs.submit(run(task, "commit1-step1", tmp_path), (1, 1))  # still needed
        gated.gate.set()
        with pytest.raises(NotNeeded):
            taken(newer_later, tmp_path / "withdrawn")
        assert taken(older_first, tmp_path / "kept").task == task.id
        assert (tmp_path / "kept" / "grade-tests.log").read_text() == "commit0-step1"
        taken(older_later, tmp_path / "kept-too")
    finally:
        executor.close()  # waits for every job still queued
    assert gated.started == ["hold", "commit0-step1", "commit0-step2", "commit1-step1"]
    assert not (tmp_path / "withdrawn").exists()


def test_a_run_past_the_cut_off_that_is_running_is_ended_and_its_process_killed(
    tmp_path: Path,
) -> None:
    """Once --max tasks are kept, a later commit's run in progress does not run to its end."""
    pid_file = tmp_path / "pid"
    hanging = add_task(
        "hangs",
        command=f"echo $$ > {pid_file}; exec sleep 600",
        grade_timeout=900,
    )
    task = load_suite(write_suite(tmp_path / "suite", [hanging])).tasks[0]
    executor = LocalExecutor(WorkerSettings(jobs=2, sandbox="none"))
    runs = RunQueue(executor)
    try:
        later = runs.submit(run(task, "commit1-step1", tmp_path), (1, 1))
        wait_until(lambda: pid_file.is_file() and pid_file.read_text().strip(), "the run's test")
        pid = int(pid_file.read_text())
        assert psutil.pid_exists(pid) and not later.done()
        runs.close_after(0)
        ended = later.result(timeout=DEADLINE)
        assert ended.result.status == "interrupted"
        assert runs.withdrawn(later)
        wait_until(lambda: not _alive(pid), "the run's test process ended")
    finally:
        executor.stop()
        executor.close()


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
