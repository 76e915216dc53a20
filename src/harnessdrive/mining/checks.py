"""Prove one candidate with the same workspaces, sandbox and grader that ``run`` uses.

Each candidate becomes a real task folder first (:mod:`harnessdrive.mining.taskfiles`), loaded
with the loader ``run`` uses. Every test run is then one call of the grader in a new grading
copy of the parent commit: with no change (the hidden tests alone), or with the gold patch (as
the reference agent of ``check`` would leave it). The setup command runs in every grading copy
after the files are written, so a copy whose gold patch changed a dependency manifest always
gets its setup again, and its shared environment is the one built for the new manifests.

Every test run is a trial job on the one executor (:mod:`harnessdrive.mining.runs`): a known
change graded by the trial core, with no workspace copy. A commit's own thread only prepares
its files and waits for its runs.

Seed 000's order: the tests must fail before the change, pass after it, then fail and pass once
more. A time-out before the change counts as a failure (a hang can be the bug). Where the test
command can be narrowed to the commit's own test files, the two runs before the change are the
narrowed command (the fast check and its repeat): the whole suite holds those tests, so their
failure is the whole suite's failure. The whole suite runs once with the change (a kept task's
whole suite passes with it), and its repeat is the narrowed command with the change.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from harnessdrive.errors import HarnessdriveError
from harnessdrive.grading import reference_outcomes
from harnessdrive.grading.kinds.tests import tests_spec
from harnessdrive.grading.verdict import Verdict
from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.environments import EnvironmentStore
from harnessdrive.mining.focus import focused_command
from harnessdrive.mining.judging import RejectReason, TestOutcome, detail, judge, outcome_of
from harnessdrive.mining.runs import RunQueue, grading_run, taken
from harnessdrive.mining.slots import NotNeeded, Rank, RunSlots
from harnessdrive.mining.summary import CheckRecord, RunRecord
from harnessdrive.mining.taskfiles import TaskSettings, record_change_kind, write_task_folder
from harnessdrive.mining.time_limit import TimeLimit
from harnessdrive.protocols.base import GivenChange
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.process import StopToken
from harnessdrive.tasks.loading import Task, load_task
from harnessdrive.trial.job import JobResult
from harnessdrive.workspace.changes import Changes, capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import Snapshot, build_snapshot
from harnessdrive.workspace.solution import apply_solution

ROUND_SIZE = 2
"""Runs per round after the fast check: before and after the fix (or, where the fast check
ran, the whole suite with the fix and the commit's own tests before it)."""


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
    resumed: bool = False
    """Taken from the journal of an earlier run, not checked again."""

    @property
    def kept(self) -> bool:
        return self.reason is None


@dataclass(frozen=True)
class Checker:
    """Everything a candidate check needs; safe to share between worker threads."""

    repo: Path
    settings: TaskSettings
    store: EnvironmentStore | None
    runs: RunQueue
    """Where every test run goes: the one executor, in rank order."""
    staging: Path
    """Task folders are written here; kept ones move into the suite afterwards."""
    scratch: Path
    logs: Path
    stop: StopToken
    fast_reject: bool = True
    slots: RunSlots | None = None
    """Environment builds, shared by every commit in progress; None builds unbounded."""
    ranks: Mapping[str, int] = field(default_factory=dict)
    """Each candidate's place, newest first: its steps get a free worker before newer ones'."""
    notes: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    """Metadata each candidate's task folder gets (its prompt quality record)."""
    limit: TimeLimit | None = None
    """The test time limit, derived from HEAD's time once it has passed."""

    def current_settings(self) -> TaskSettings:
        """The settings with the time limit in force now."""
        if self.limit is None or self.limit.seconds == self.settings.test_timeout:
            return self.settings
        return dataclasses.replace(self.settings, test_timeout=self.limit.seconds)

    def halt(self) -> None:
        """End every test and build in progress (validation is being stopped)."""
        self.stop.stop()
        self.runs.stop()

    def check(self, candidate: Candidate) -> CandidateResult:
        started = now()
        work = self.scratch / candidate.id
        logs = self.logs / candidate.id
        work.mkdir(parents=True)
        logs.mkdir(parents=True, exist_ok=True)
        folder = self.staging / candidate.id
        try:
            result = self._check(candidate, folder, work, logs)
        except NotNeeded:  # ended past the cut-off: no verdict, so no logs of one either
            shutil.rmtree(logs, ignore_errors=True)
            shutil.rmtree(folder, ignore_errors=True)
            raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if not result.kept:
            shutil.rmtree(folder, ignore_errors=True)
            result = dataclasses.replace(result, folder=None)
        return dataclasses.replace(result, seconds=round(now() - started, 3))

    def _check(self, candidate: Candidate, folder: Path, work: Path, logs: Path) -> CandidateResult:
        check = CheckRecord()
        rank = self.ranks.get(candidate.id, 0)

        def rejected(reason: RejectReason, detail: str = "") -> CandidateResult:
            return CandidateResult(candidate, reason, check, None, environments, detail=detail)

        environments: tuple[str, ...] = ()
        try:
            notes = self.notes.get(candidate.id)
            settings = self.current_settings()
            write_task_folder(folder, self.repo, candidate, settings, notes=notes, kind=False)
            task = load_task(folder)
            snapshot = build_snapshot(self.repo, candidate.parent, work / "snapshot")
        except (HarnessdriveError, OSError) as exc:
            return rejected("could not copy the commit", str(exc))

        def prepared(state: str, files: Path, prototype: Callable[[], Path]) -> str | None:
            """Build what ``files`` need; the error when that fails."""
            nonlocal environments
            if self.store is None:
                return None
            with self._slot((rank, 0)):
                outcome = self.store.prepare(files, prototype, logs)
            environments = tuple(dict.fromkeys((*environments, *outcome.keys)))
            return None if outcome.ok else f"{state}: {outcome.error}"

        # The parent's environments now; the commit's (its gold patch may change the manifests)
        # only for a candidate that the fast check leaves standing.
        error = prepared("before", snapshot.root, lambda: copy_snapshot(snapshot, work / "env"))
        if error is not None:
            return rejected("setup command failed", error)
        empty = Changes(base_tree=snapshot.tree, tree=snapshot.tree, files=(), patch=b"")

        narrowed: Task | None = None
        if self.fast_reject:
            existing = [p for p in candidate.hidden_tests if candidate.change(p).new_blob]
            focused = focused_command(self.settings.test_command, existing)
            if focused is not None:
                narrowed = _with_command(task, focused)
                run = self._submit(narrowed, snapshot, empty, logs / "focused", (rank, 0))
                outcome = self._outcome(run, logs / "focused")
                check = check.model_copy(update={"focused": outcome.record})
                if outcome.setup_failed:
                    return rejected("setup command failed")
                if outcome.passed:
                    return rejected("tests pass before the fix", "its own tests pass alone")

        # The gold patch and what it changes only for a candidate that the fast check leaves
        # standing: most candidates end there, and this is then work for nothing.
        try:
            record_change_kind(folder, self.repo, candidate)
            gold_copy = copy_snapshot(snapshot, work / "gold")
            apply_solution(task, gold_copy)
            gold = capture_changes(snapshot, gold_copy)
        except (HarnessdriveError, OSError) as exc:
            return rejected("could not copy the commit", str(exc))
        error = prepared("after", gold_copy, lambda: gold_copy)
        if error is not None:
            return rejected("setup command failed", error)
        steps: tuple[tuple[str, Task, Changes], ...]
        if narrowed is None:
            steps = (
                ("before", task, empty),
                ("after", task, gold),
                ("before_again", task, empty),
                ("after_again", task, gold),
            )
        else:
            # The whole suite holds the commit's own tests, so their failure alone already
            # makes it fail before the fix. The whole suite runs once with the fix (a kept
            # task's whole suite passes); the second round repeats the commit's own tests,
            # before and with the fix, which is where a flaky test shows.
            steps = (
                ("after", task, gold),
                ("focused_again", narrowed, empty),
                ("focused_after", narrowed, gold),
            )
        after: Verdict | None = None
        for label, outcome in self._whole_suite(snapshot, steps, logs, rank):
            check = check.model_copy(update={label: outcome.record})
            if outcome.setup_failed:
                return rejected("setup command failed", label)
            reason = judge(label, outcome)
            if reason is not None:
                return rejected(reason, detail(label, outcome, logs / label, self.logs.parent))
            if label == "after":
                after = outcome.verdict
        _record_after(task, after)
        return CandidateResult(candidate, None, check, folder, environments)

    def _whole_suite(
        self,
        snapshot: Snapshot,
        steps: Sequence[tuple[str, Task, Changes]],
        logs: Path,
        rank: int,
    ) -> list[tuple[str, TestOutcome]]:
        """The runs after the fast check in judging order, up to and including the first that
        rejects.

        The runs of the first round wait for workers at once (earlier steps first), so they use
        whatever workers other commits leave free; a step of the second round is submitted
        only once the same step of the first round has ended, so a fix that leaves state
        behind (a file outside the copy, say) still shows up as flaky. Once a step rejects,
        every later step that has not started is withdrawn and none is submitted; every step
        before the deciding one has run, so the verdict and the record are those of running
        the steps one after another.
        """
        outcomes: dict[int, TestOutcome] = {}
        pending: dict[Future[JobResult], int] = {}
        withdrawn: set[int] = set()
        first_rejection = len(steps)

        def submit(index: int) -> None:
            label, task, changes = steps[index]
            run = self._submit(task, snapshot, changes, logs / label, (rank, index + 1))
            pending[run] = index

        try:
            for index in range(min(ROUND_SIZE, len(steps))):
                submit(index)
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    index = pending.pop(future)
                    if index in withdrawn and future.cancelled():
                        continue
                    label = steps[index][0]
                    outcome = self._outcome(future, logs / label)
                    outcomes[index] = outcome
                    if outcome.setup_failed or judge(label, outcome) is not None:
                        first_rejection = min(first_rejection, index)
                        for later, place in pending.items():
                            if place > first_rejection:
                                withdrawn.add(place)
                                later.cancel()  # only one that has not started
                    again = index + ROUND_SIZE
                    if again < min(first_rejection, len(steps)):
                        submit(again)
        finally:
            for future in pending:  # stopped, or past the cut-off: nothing more is needed
                future.cancel()
        last = first_rejection
        return [(steps[i][0], outcomes[i]) for i in range(min(last + 1, len(steps)))]

    def _slot(self, rank: Rank) -> AbstractContextManager[None]:
        return nullcontext() if self.slots is None else self.slots.held(rank)

    def _submit(
        self,
        task: Task,
        snapshot: Snapshot,
        changes: Changes,
        logs: Path,
        rank: Rank,
    ) -> Future[JobResult]:
        known = GivenChange(changes=changes, base=snapshot)
        key = f"mine:{task.id}:{logs.name}"
        return self.runs.submit(grading_run(key, task, known, logs), rank)

    def _outcome(self, run: Future[JobResult], logs: Path) -> TestOutcome:
        """What a run found; its logs (grade-setup.log, grade-tests.log) kept in ``logs``."""
        result = taken(run, logs)
        if result.status == "interrupted":
            if self.runs.withdrawn(run):  # ended because --max tasks are kept before it
                raise NotNeeded
            raise Stopped(f"stopped while {result.task} ran its tests")
        last = result.rounds[-1] if result.rounds else None
        if last is None or last.grading is None:
            # The machinery failed (it says how in the job's note): never a pass.
            return TestOutcome(RunRecord(exit_code=None, seconds=0.0), False)
        return outcome_of(last.grading)


def _record_after(task: Task, after: Verdict | None) -> None:
    """The kept commit's per-test outcomes after the fix, recorded as the reference's."""
    run = after.hidden if after is not None else None
    if run is None or not run.hidden_outcomes or "failed" in run.hidden_outcomes.values():
        return
    # Without a record the declaration rule grades it (a name no UTF-8 holds is not recorded).
    with contextlib.suppress(OSError, ValueError):
        reference_outcomes.write(task, run.hidden_outcomes)


def _with_command(task: Task, command: str) -> Task:
    grade_spec = tests_spec(task.spec.grade).model_copy(update={"command": command})
    return dataclasses.replace(task, spec=task.spec.model_copy(update={"grade": grade_spec}))
