"""Validation: keep only the candidates whose tests fail before the change and pass after it.

First the test command must pass in a fresh copy of HEAD; otherwise nothing can be judged and
mining stops with the end of its output. Then candidates are checked newest first, at most
three times ``--max`` of them, ``jobs`` at a time, until ``--max`` are kept. The result does
not depend on ``jobs``: it is the newest candidates up to the one that completed ``--max``
kept tasks, exactly as a one-at-a-time run would have checked them.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from harnessdrive.errors import HarnessdriveError, Setting, UserError
from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.checks import CandidateResult, Checker, Stopped
from harnessdrive.mining.failures import explain_setup_failure, explain_test_failure
from harnessdrive.mining.judging import REJECT_REASONS, RejectReason
from harnessdrive.mining.runs import grading_run, taken
from harnessdrive.mining.skips import SkipReport, read_skips
from harnessdrive.mining.slots import NotNeeded
from harnessdrive.mining.summary import RunRecord
from harnessdrive.mining.taskfiles import write_suite_task
from harnessdrive.protocols.base import GivenChange
from harnessdrive.protocols.known_change import setup_failed
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.process import StopToken
from harnessdrive.tasks.loading import load_task
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot

TAIL_LINES = 15
HEAD_CHECK_LOG = "head-check.log"
HEAD_SETUP_LOG = "head-setup.log"
HEAD_RANK = (-1, 0)
"""HEAD is checked before any commit."""

Progress = Callable[[int, int, CandidateResult], None]


class CandidateChecker(Protocol):
    """What :func:`validate` needs: :class:`Checker`, or a stand-in in tests."""

    @property
    def stop(self) -> StopToken: ...

    def check(self, candidate: Candidate) -> CandidateResult: ...

    def halt(self) -> None:
        """End every test still running; called once when validation is stopped."""
        ...


@dataclass(frozen=True)
class ValidationOutcome:
    results: tuple[CandidateResult, ...]
    """Every counted candidate, newest first."""
    seconds: float

    @property
    def kept(self) -> list[CandidateResult]:
        return [r for r in self.results if r.kept]

    @property
    def rejected(self) -> dict[RejectReason, int]:
        counts: dict[RejectReason, int] = {}
        for result in self.results:
            if result.reason is not None:
                counts[result.reason] = counts.get(result.reason, 0) + 1
        return {reason: counts[reason] for reason in REJECT_REASONS if reason in counts}


@dataclass(frozen=True)
class HeadCheck:
    record: RunRecord
    environments: tuple[str, ...]
    skips: SkipReport | None = None
    """What HEAD's run skipped, and why (from its junit report)."""
    installed: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    """The extras and dependency groups HEAD's Python environment installs."""


def check_head(checker: Checker, head: str) -> HeadCheck:
    """Run setup and the test command in a fresh copy of HEAD; a failure is a UserError."""
    environments: tuple[str, ...] = ()
    work = checker.scratch / "head"
    folder = checker.staging / "head"
    write_suite_task(
        folder, checker.settings, name="head", prompt="HEAD check", repo=checker.repo, ref=head
    )
    logs = checker.logs / "head"
    try:
        task = load_task(folder)
        snapshot = build_snapshot(checker.repo, head, work / "snapshot")
    except (HarnessdriveError, OSError) as exc:
        raise UserError(f"cannot copy HEAD of {checker.repo}: {exc}") from None
    installed = None
    if checker.store is not None and checker.store.needs.python:
        choice = checker.store.needs.choice
        root = snapshot.root
        installed = (tuple(choice.extras_for(root)), tuple(choice.groups_for(root)))
    if checker.store is not None:
        prepared = checker.store.prepare(
            snapshot.root, lambda: copy_snapshot(snapshot, work / "env"), logs
        )
        environments = prepared.keys
        if not prepared.ok:
            log = prepared.log or logs
            moved = _keep_log(log, checker.logs / HEAD_SETUP_LOG)
            cause = explain_setup_failure(None, moved, network=True, timeout=0)
            raise UserError(
                f"the test environment cannot be built for HEAD: {cause}. Choose what it installs"
                " with --extras and --groups, or give a setup command that installs what the"
                " tests need." + _tail(moved),
                settings=(Setting("setup_command", "CMD"),),
            )
    job = grading_run("mine:head", task, GivenChange(base=snapshot), logs)
    try:
        result = taken(checker.runs.submit(job, HEAD_RANK), logs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if result.status == "interrupted":
        raise Stopped("stopped while HEAD ran its tests")
    last = result.rounds[-1] if result.rounds else None
    verdict = last.grading if last is not None else None
    if verdict is not None and setup_failed(verdict):
        log = _keep_log(logs / "grade-setup.log", checker.logs / HEAD_SETUP_LOG)
        cause = explain_setup_failure(
            verdict.setup,
            log,
            network=checker.settings.setup_network,
            timeout=task.spec.setup.timeout,
        )
        raise UserError(f"setup fails in a fresh copy of HEAD: {cause}." + _tail(log))
    if verdict is None or (verdict.outcome == "not_graded" and verdict.error):
        why = verdict.error if verdict is not None else (result.note or "the machinery failed")
        log = _keep_log(logs / "grade-tests.log", checker.logs / HEAD_CHECK_LOG)
        raise UserError(f"the tests cannot be graded at HEAD: {why}." + _tail(log))
    _keep_log(logs / "grade-setup.log", checker.logs / HEAD_SETUP_LOG)
    log = _keep_log(logs / "grade-tests.log", checker.logs / HEAD_CHECK_LOG)
    run = verdict.hidden
    if verdict.outcome == "pass" and run is not None:
        record = RunRecord(exit_code=run.exit_code, seconds=run.seconds)
        if checker.limit is not None:
            checker.limit.derive(run.seconds)
        return HeadCheck(record, environments, read_skips(logs), installed)
    if run is not None and run.timed_out:
        problem = (
            f"the test command times out after {checker.settings.test_timeout:g} s in a fresh copy"
            " of HEAD; give the suite a longer test timeout."
        )
        fix = Setting("test_timeout", "SECONDS")
    else:
        failing = explain_test_failure(logs)
        problem = (
            "the test command fails in a fresh copy of HEAD, so no commit can be judged by it"
            + (f" ({failing})" if failing else "")
            + ". Mine from a revision where it passes with --rev, or accept the failures known"
            " at HEAD with --known-failures (a file of test ids, or 'head' to record them)."
        )
        fix = Setting("known_failures", "FILE|head")
    raise UserError(problem + _tail(log), settings=(fix,))


def _keep_log(source: Path, target: Path) -> Path:
    if source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return target


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").rstrip("\n").splitlines()
    except OSError:
        lines = []
    shown = "\n".join("  " + line for line in lines[-TAIL_LINES:])
    return f"\nFull output: {log}\nLast {min(len(lines), TAIL_LINES)} lines:\n{shown}"


def validate(
    candidates: Sequence[Candidate],
    checker: CandidateChecker,
    *,
    max_tasks: int,
    jobs: int = 1,
    progress: Progress | None = None,
    settled: Callable[[int], None] | None = None,
) -> ValidationOutcome:
    """Check candidates newest first until ``max_tasks`` are kept (at most 3 x ``max_tasks``).

    ``settled`` hears the place of the last candidate a one-at-a-time run would check, once it
    is known; a check of a later candidate may then raise :class:`NotNeeded`. ``progress``
    hears the results in that order too, and none past that place, so a commit it calls kept is
    one the suite holds.
    """
    started = now()
    # Read as needed: a candidate may be known before the whole list is (SampledCandidates).
    window = 3 * max_tasks
    taken_so_far = 0
    results: dict[int, CandidateResult] = {}
    running: dict[Future[CandidateResult], int] = {}
    # The commits in progress: each writes its files and waits for its test runs, which are jobs
    # on the checker's executor; no test runs on these threads.
    pool = ThreadPoolExecutor(max_workers=max(jobs, 1), thread_name_prefix="mine-commit")
    reported = 0
    try:
        while True:
            kept = sum(1 for r in results.values() if r.kept)
            while len(running) < max(jobs, 1) and kept < max_tasks:
                candidate = _nth(candidates, taken_so_far) if taken_so_far < window else None
                if candidate is None:
                    break
                running[pool.submit(checker.check, candidate)] = taken_so_far
                taken_so_far += 1
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                index = running.pop(future)
                try:
                    results[index] = future.result()
                except NotNeeded:
                    continue
            last = _last_needed(results, max_tasks)
            if last is not None and settled is not None:
                settled(last)
            while reported in results and (last is None or reported <= last):
                if progress is not None:
                    total = min(len(candidates), window)
                    progress(reported + 1, total, results[reported])
                reported += 1
    except BaseException:
        checker.halt()  # ends every test still running; their copies are then removed
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    counted: list[CandidateResult] = []
    for index in sorted(results):
        result = results[index]
        if sum(1 for r in counted if r.kept) < max_tasks:
            counted.append(result)
        elif result.folder is not None:  # checked past where a one-at-a-time run stops
            shutil.rmtree(result.folder, ignore_errors=True)
    return ValidationOutcome(tuple(counted), round(now() - started, 3))


def _nth(candidates: Sequence[Candidate], index: int) -> Candidate | None:
    try:
        return candidates[index]
    except IndexError:
        return None


def _last_needed(results: dict[int, CandidateResult], max_tasks: int) -> int | None:
    """The place of the candidate that completes ``max_tasks`` kept among all before it."""
    kept = 0
    index = 0
    while index in results:
        kept += results[index].kept
        if kept >= max_tasks:
            return index
        index += 1
    return None
