"""A job runner for executor tests: it runs no trial, notes the order jobs start in, and holds
the job whose key is ``hold`` until ``gate`` is set."""

from __future__ import annotations

import threading

from harnessdrive.trial.job import JobResult, TrialJob
from harnessdrive.trial.worker import WorkerContext


class HoldingRunner:
    def __init__(self) -> None:
        self.started: list[str] = []
        self.gate = threading.Event()
        self.holding = threading.Event()

    def __call__(self, job: TrialJob, worker: WorkerContext) -> JobResult:
        self.started.append(job.key)
        if job.key == "hold":
            self.holding.set()
            self.gate.wait(timeout=30)
        artifacts = worker.new_artifacts()
        (artifacts / "grade-tests.log").write_text(job.key)
        return JobResult(job.identity, artifacts)
