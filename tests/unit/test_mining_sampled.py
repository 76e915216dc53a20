"""The candidates before the first sampled place are checked while the samples still run."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.executors.local import LocalExecutor
from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.checks import Checker
from harnessdrive.mining.drift import SampledCandidates
from harnessdrive.mining.history import scan_history
from harnessdrive.mining.runs import RunQueue
from harnessdrive.mining.taskfiles import TaskSettings
from harnessdrive.sandbox.process import StopToken
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.trial.job import JobResult, TrialJob, WorkerSettings
from harnessdrive.trial.worker import WorkerContext
from tests.waiting import wait_until


class SamplesHeld:
    """Runs no trial; holds every sample's run until ``release`` is set."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.release = threading.Event()

    def __call__(self, job: TrialJob, worker: WorkerContext) -> JobResult:
        self.started.append(job.key)
        if job.key.startswith("mine:sample-"):
            self.release.wait()  # set by the test, or by the fixture when it ends
        # A run that came back with nothing graded: never a pass.
        return JobResult(job.identity.revised(status="could_not_run"), worker.new_artifacts())


@pytest.fixture
def held() -> Iterator[SamplesHeld]:
    runner = SamplesHeld()
    yield runner
    runner.release.set()


def test_a_candidate_before_the_first_sample_is_there_while_the_samples_run(
    tmp_path: Path, held: SamplesHeld
) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Start", {"app.py": "V = 0\n", "tests/test_base.py": "def test_ok():\n    pass\n"})
    for n in range(4):
        test = {f"tests/test_{n}.py": "def test_it():\n    pass\n"}
        repo.commit(f"Change {n}", {"app.py": f"V = {n + 1}\n", **test})
    repo.close()
    candidates = scan_history(tmp_path / "repo", "2000-01-01").candidates
    assert len(candidates) == 4
    executor = LocalExecutor(WorkerSettings(jobs=2, sandbox="none"), run=held)
    checker = Checker(
        repo=tmp_path / "repo",
        settings=TaskSettings(test_command="true", setup_command=None, test_timeout=60),
        store=None,
        runs=RunQueue(executor),
        staging=tmp_path / "staging",
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        stop=StopToken(),
    )
    try:
        sampled = SampledCandidates(checker, candidates, every=2)  # places 1 and 3
        wait_until(lambda: len(held.started) == 2, "both samples running")
        first: list[Candidate] = []
        threading.Thread(target=lambda: first.append(sampled[0]), daemon=True).start()
        wait_until(lambda: first, "the first candidate, while the samples are held")
        assert first == [candidates[0]]  # in no range, whatever the samples find
        held.release.set()
        assert len(sampled) == 1  # now known: every sampled place failed, and is skipped
        report = sampled.report()
        assert [s.candidate for s in report.samples] == [candidates[1], candidates[3]]
        assert list(sampled) == [candidates[0]]
    finally:
        executor.close()
