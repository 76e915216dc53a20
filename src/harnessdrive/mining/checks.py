"""Prove one candidate with the same workspaces, sandbox and grader that ``run`` uses.

Each candidate becomes a real task folder first (:mod:`harnessdrive.mining.taskfiles`), loaded
with the loader ``run`` uses. Every test run is then one call of the grader in a new grading
copy of the parent commit: with no change (the hidden tests alone), or with the gold patch (as
the reference agent of ``check`` would leave it). The setup command runs in every grading copy
after the files are written, so a copy whose gold patch changed a dependency manifest always
gets its setup again, and its shared environment is the one built for the new manifests.

Seed 000's order: the tests must fail before the change, pass after it, then fail and pass once
more. A time-out before the change counts as a failure (a hang can be the bug).
"""

from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from harnessdrive.errors import GradingError, HarnessdriveError, SetupFailedError
from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.verdict import Verdict
from harnessdrive.harnesses.scripted import apply_solution
from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.environments import EnvironmentStore
from harnessdrive.mining.focus import focused_command
from harnessdrive.mining.summary import CheckRecord, RunRecord
from harnessdrive.mining.taskfiles import TaskSettings, write_task_folder
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import Sandbox
from harnessdrive.tasks.loading import Task, load_task
from harnessdrive.workspace.changes import Changes, capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import Snapshot, build_snapshot

RejectReason = Literal[
    "tests pass before the fix",
    "tests fail with the fix",
    "flaky",
    "tests time out with the fix",
    "setup command failed",
    "could not copy the commit",
    "the fix trips a tamper check",
]
REJECT_REASONS: tuple[RejectReason, ...] = get_args(RejectReason)  # in the order above


class Stopped(Exception):
    """A signal stopped validation while a test ran."""


@dataclass(frozen=True)
class CandidateResult:
    candidate: Candidate
    reason: RejectReason | None
    check: CheckRecord
    folder: Path | None
    """The task folder (kept candidates only)."""
    environments: tuple[str, ...] = ()
    """The shared environments its copies use."""
    seconds: float = 0.0
    detail: str = ""

    @property
    def kept(self) -> bool:
        return self.reason is None


@dataclass(frozen=True)
class TestOutcome:
    record: RunRecord
    passed: bool
    verdict: Verdict | None = None
    setup_failed: bool = False

    @property
    def timed_out(self) -> bool:
        return self.record.timed_out

    @property
    def tampered(self) -> bool:
        return self.verdict is not None and self.verdict.outcome == "tampered"


@dataclass(frozen=True)
class Checker:
    """Everything a candidate check needs; safe to share between worker threads."""

    repo: Path
    settings: TaskSettings
    store: EnvironmentStore | None
    sandbox: Sandbox
    python: str
    staging: Path
    """Task folders are written here; kept ones move into the suite afterwards."""
    scratch: Path
    logs: Path
    stop: StopToken
    fast_reject: bool = True

    def check(self, candidate: Candidate) -> CandidateResult:
        started = now()
        work = self.scratch / candidate.id
        logs = self.logs / candidate.id
        work.mkdir(parents=True)
        logs.mkdir(parents=True, exist_ok=True)
        folder = self.staging / candidate.id
        try:
            result = self._check(candidate, folder, work, logs)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if not result.kept:
            shutil.rmtree(folder, ignore_errors=True)
            result = dataclasses.replace(result, folder=None)
        return dataclasses.replace(result, seconds=round(now() - started, 3))

    def _check(self, candidate: Candidate, folder: Path, work: Path, logs: Path) -> CandidateResult:
        check = CheckRecord()

        def rejected(reason: RejectReason, detail: str = "") -> CandidateResult:
            return CandidateResult(candidate, reason, check, None, environments, detail=detail)

        environments: tuple[str, ...] = ()
        try:
            write_task_folder(folder, self.repo, candidate, self.settings)
            task = load_task(folder)
            snapshot = build_snapshot(self.repo, candidate.parent, work / "snapshot")
            gold_copy = copy_snapshot(snapshot, work / "gold")
            apply_solution(task, gold_copy)
            gold = capture_changes(snapshot, gold_copy)
        except (HarnessdriveError, OSError) as exc:
            return rejected("could not copy the commit", str(exc))
        if self.store is not None:
            # The environments before the change and after it (the gold patch may change them).
            states = (
                ("before", snapshot.root, lambda: copy_snapshot(snapshot, work / "env")),
                ("after", gold_copy, lambda: gold_copy),
            )
            for state, files, prototype in states:
                prepared = self.store.prepare(files, prototype, logs)
                environments = tuple(dict.fromkeys((*environments, *prepared.keys)))
                if not prepared.ok:
                    return rejected("setup command failed", f"{state}: {prepared.error}")
        empty = Changes(base_tree=snapshot.tree, tree=snapshot.tree, files=(), patch=b"")

        if self.fast_reject:
            existing = [p for p in candidate.hidden_tests if candidate.change(p).new_blob]
            focused = focused_command(self.settings.test_command, existing)
            if focused is not None:
                narrowed = _with_command(task, focused)
                outcome = self._run(narrowed, snapshot, empty, "focused", work, logs)
                check = check.model_copy(update={"focused": outcome.record})
                if outcome.setup_failed:
                    return rejected("setup command failed")
                if outcome.passed:
                    return rejected("tests pass before the fix", "its own tests pass alone")

        steps: tuple[tuple[str, Changes], ...] = (
            ("before", empty),
            ("after", gold),
            ("before_again", empty),
            ("after_again", gold),
        )
        for label, changes in steps:
            outcome = self._run(task, snapshot, changes, label, work, logs)
            check = check.model_copy(update={label: outcome.record})
            if outcome.setup_failed:
                return rejected("setup command failed", label)
            reason = _judge(label, outcome)
            if reason is not None:
                return rejected(reason, label)
        return CandidateResult(candidate, None, check, folder, environments)

    def _run(
        self,
        task: Task,
        snapshot: Snapshot,
        changes: Changes,
        label: str,
        work: Path,
        logs: Path,
    ) -> TestOutcome:
        scratch = work / f"grade-{label}"
        scratch.mkdir()
        setup = GradingSetup(
            task=task,
            snapshot=snapshot,
            scratch=scratch,
            logs=logs / label,
            sandbox=self.sandbox,
            python=self.python,
            stop=self.stop,
            readonly=(self.store.root,) if self.store is not None else (),
        )
        try:
            verdict = grade(setup, changes)
        except SetupFailedError:
            return TestOutcome(RunRecord(exit_code=None, seconds=0.0), False, setup_failed=True)
        except GradingError as exc:
            if self.stop.stopped:
                raise Stopped(str(exc)) from exc
            # The grader could not judge this run (an unreadable report, say): never a pass.
            return TestOutcome(RunRecord(exit_code=None, seconds=0.0), False)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return outcome_of(verdict)


def outcome_of(verdict: Verdict) -> TestOutcome:
    run = verdict.hidden
    setup = verdict.setup
    if setup is not None and (setup.exit_code != 0 or setup.timed_out):
        return TestOutcome(RunRecord(exit_code=None, seconds=setup.seconds), False, verdict, True)
    if run is None:
        return TestOutcome(RunRecord(exit_code=None, seconds=0.0), False, verdict)
    # The witness's planted failures make an all-passing run exit 1; record the tests' own status.
    status = 0 if run.succeeded else run.exit_code
    record = RunRecord(
        exit_code=None if run.timed_out else status,
        seconds=run.seconds,
        timed_out=run.timed_out,
    )
    return TestOutcome(record, verdict.outcome == "pass", verdict)


def _judge(label: str, outcome: TestOutcome) -> RejectReason | None:
    """Why a run's result rejects the candidate, or None when it is the expected one."""
    before = label.startswith("before")
    again = label.endswith("again")
    if before:
        if outcome.passed:  # a time-out before the change is a failure: a hang can be the bug
            return "flaky" if again else "tests pass before the fix"
        return None
    if outcome.passed:
        return None
    if again:
        return "flaky"
    if outcome.tampered:
        return "the fix trips a tamper check"
    return "tests time out with the fix" if outcome.timed_out else "tests fail with the fix"


def _with_command(task: Task, command: str) -> Task:
    grade_spec = task.spec.grade.model_copy(update={"command": command})
    return dataclasses.replace(task, spec=task.spec.model_copy(update={"grade": grade_spec}))
