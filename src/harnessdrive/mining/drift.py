"""History drift: where the suite stops passing on today's toolchain, found before the checks.

Old commits were tested with the interpreters, compilers and dependency versions of their day.
On today's, a stretch of history can fail the same unrelated tests at every commit (a
deprecated API removed, a time zone rule changed), and every candidate there is rejected after
paying its runs. So before the candidates are checked, the whole suite runs once at the parent
of every Nth candidate (a sample). Failing samples next to each other that share a failing test,
and the candidates between them, form a range that cannot be mined; the range runs to the end
of the history when its oldest sample is the oldest one taken. A failing sample alone is a range
of its one candidate. Candidates in a range are skipped, and reported with the tests their
samples share: only the samples ran there, one suite run each.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import overload

from harnessdrive.errors import HarnessdriveError
from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.checks import Checker, Stopped
from harnessdrive.mining.failures import failing_tests
from harnessdrive.mining.runs import grading_run, taken
from harnessdrive.mining.slots import NotNeeded
from harnessdrive.mining.taskfiles import write_suite_task
from harnessdrive.protocols.base import GivenChange
from harnessdrive.protocols.known_change import setup_failed
from harnessdrive.tasks.loading import load_task
from harnessdrive.trial.job import JobResult
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot

DEFAULT_SAMPLE_EVERY = 8
SAMPLES_FOLDER = "samples"
NO_REPORT = "the suite fails (no junit report names the tests)"
NO_ENVIRONMENT = "the test environment does not build"


@dataclass(frozen=True)
class Sample:
    index: int
    """The candidate's place, newest first."""
    candidate: Candidate
    passed: bool
    failing: tuple[str, ...] = ()
    """The failing tests, or why the run failed where no report names them."""


@dataclass(frozen=True)
class DriftRange:
    newest: Candidate
    oldest: Candidate
    candidates: tuple[Candidate, ...]
    failing: tuple[str, ...]
    """The failing tests every sample of the range shares."""
    samples: int


@dataclass(frozen=True)
class DriftReport:
    every: int
    samples: tuple[Sample, ...]
    ranges: tuple[DriftRange, ...]

    @property
    def skipped(self) -> frozenset[str]:
        return frozenset(c.id for r in self.ranges for c in r.candidates)


def sample_places(count: int, every: int) -> list[int]:
    """The places sampled among ``count`` candidates: every ``every``-th, from the ``every``-th."""
    if every < 1:
        return []
    return list(range(every - 1, count, every))


def find_ranges(candidates: Sequence[Candidate], samples: Sequence[Sample]) -> list[DriftRange]:
    """The ranges that cannot be mined, newest first (see the module's docstring)."""
    ordered = sorted(samples, key=lambda s: s.index)
    ranges: list[DriftRange] = []
    group: list[Sample] = []
    shared: set[str] = set()

    def close(last_overall: bool) -> None:
        if not group:
            return
        start = group[0].index
        end = len(candidates) - 1 if last_overall else group[-1].index
        ranges.append(
            DriftRange(
                newest=candidates[start],
                oldest=candidates[end],
                candidates=tuple(candidates[start : end + 1]),
                failing=tuple(sorted(shared)),
                samples=len(group),
            )
        )

    for position, sample in enumerate(ordered):
        if sample.passed:
            close(last_overall=False)
            group, shared = [], set()
            continue
        failing = set(sample.failing)
        if group and not shared & failing:
            close(last_overall=False)  # a different failure: a range of its own
            group, shared = [], set()
        shared = failing if not group else shared & failing
        group.append(sample)
        if position == len(ordered) - 1:
            close(last_overall=True)
            group = []
    return ranges


def sample_history(checker: Checker, candidates: Sequence[Candidate], every: int) -> DriftReport:
    """Run the whole suite at the sampled candidates' parents, all at once, and find the ranges."""
    return SampledCandidates(checker, candidates, every).report()


class SampledCandidates(Sequence[Candidate]):
    """The candidates to check, the ones in ranges that cannot be mined left out, available as
    soon as that is known of them: the samples' copies are made and their runs submitted on a
    thread of their own (their runs start before any candidate's that waits), and a candidate
    before the first sampled place is in no range, so it is there at once; a later one (and the
    length) once every sample has run."""

    def __init__(self, checker: Checker, candidates: Sequence[Candidate], every: int) -> None:
        self._checker = checker
        self._candidates = candidates
        self._every = every
        self._places = sample_places(len(candidates), every)
        self._first = self._places[0] if self._places else len(candidates)
        self._runs: dict[int, Future[JobResult] | str] = {}
        self._failed: BaseException | None = None
        self._submitting = threading.Thread(
            target=self._submit_all, name="mine-samples", daemon=True
        )
        self._submitting.start()
        self._guard = threading.Lock()
        self._report: DriftReport | None = None
        self._left: list[Candidate] | None = None

    def _submit_all(self) -> None:
        try:
            for order, index in enumerate(self._places):
                self._runs[index] = _submit(self._checker, self._candidates[index], order)
        except BaseException as exc:  # raised where the report is read
            self._failed = exc

    def settle(self) -> None:
        """Wait until every sample's run is submitted (or its submission failed)."""
        self._submitting.join()

    def report(self) -> DriftReport:
        """The samples' report (waits for their runs; the first caller reads them)."""
        self.settle()
        if self._failed is not None:
            raise self._failed
        with self._guard:
            if self._report is None:
                candidates, runs = self._candidates, self._runs
                samples = [_sample(self._checker, i, candidates[i], runs[i]) for i in self._places]
                ranges = tuple(find_ranges(candidates, samples))
                self._report = DriftReport(self._every, tuple(samples), ranges)
                skipped = self._report.skipped
                self._left = [c for c in candidates if c.id not in skipped]
            return self._report

    def _remaining(self) -> list[Candidate]:
        self.report()
        assert self._left is not None
        return self._left

    def __len__(self) -> int:
        return len(self._remaining())

    @overload
    def __getitem__(self, index: int) -> Candidate: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Candidate]: ...

    def __getitem__(self, index: int | slice) -> Candidate | Sequence[Candidate]:
        if isinstance(index, int) and 0 <= index < self._first:
            return self._candidates[index]  # before every range: the same place either way
        return self._remaining()[index]


def _logs(checker: Checker, candidate: Candidate) -> Path:
    return checker.logs / SAMPLES_FOLDER / candidate.id


def _submit(checker: Checker, candidate: Candidate, order: int) -> Future[JobResult] | str:
    """The run at the candidate's parent, or why it could not start."""
    name = f"sample-{candidate.id}"
    folder = checker.staging / name
    work = checker.scratch / name
    logs = _logs(checker, candidate)
    write_suite_task(
        folder,
        checker.settings,
        name=name,
        prompt="history sample",
        repo=checker.repo,
        ref=candidate.parent,
    )
    try:
        task = load_task(folder)
        snapshot = build_snapshot(checker.repo, candidate.parent, work / "snapshot")
    except (HarnessdriveError, OSError) as exc:
        return f"the commit could not be copied: {exc}"
    if checker.store is not None:
        prepared = checker.store.prepare(
            snapshot.root, lambda: copy_snapshot(snapshot, work / "env"), logs
        )
        if not prepared.ok:
            return NO_ENVIRONMENT
    job = grading_run(f"mine:{name}", task, GivenChange(base=snapshot), logs)
    # After HEAD's run, before every candidate's.
    return checker.runs.submit(job, (-1, 1 + order))


def _sample(
    checker: Checker, index: int, candidate: Candidate, run: Future[JobResult] | str
) -> Sample:
    name = f"sample-{candidate.id}"
    try:
        if isinstance(run, str):
            return Sample(index, candidate, False, (run,))
        logs = _logs(checker, candidate)
        try:
            result = taken(run, logs)
        except NotNeeded:
            raise Stopped("stopped while the history was sampled") from None
        if result.status == "interrupted":
            raise Stopped("stopped while the history was sampled")
        last = result.rounds[-1] if result.rounds else None
        verdict = last.grading if last is not None else None
        if verdict is None:
            return Sample(index, candidate, False, (result.note or "the run failed",))
        if setup_failed(verdict):
            return Sample(index, candidate, False, ("setup fails",))
        if verdict.outcome == "pass":
            return Sample(index, candidate, True)
        if verdict.hidden is not None and verdict.hidden.timed_out:
            return Sample(index, candidate, False, ("the suite times out",))
        return Sample(index, candidate, False, tuple(failing_tests(logs)) or (NO_REPORT,))
    finally:
        shutil.rmtree(checker.scratch / name, ignore_errors=True)
        shutil.rmtree(checker.staging / name, ignore_errors=True)
