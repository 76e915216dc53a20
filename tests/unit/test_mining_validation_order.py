"""Which candidates validation checks and counts, with a stand-in for the per-commit check."""

from __future__ import annotations

import threading
import time

import pytest

from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.checks import CandidateResult
from harnessdrive.mining.judging import RejectReason
from harnessdrive.mining.slots import RunSlots
from harnessdrive.mining.summary import CheckRecord
from harnessdrive.mining.validation import validate
from harnessdrive.sandbox.process import StopToken


def candidate(n: int) -> Candidate:
    sha = f"{n:040x}"
    return Candidate(
        id=sha[:12], subject=f"Change {n}", body="", commit=sha, parent="f" * 40,
        hidden_tests=["tests/test_a.py"], gold_files=["a.py"], gold_lines=1,
        changes_dependencies=False, files=[],
    )  # fmt: skip


class ScriptedChecker:
    """Keeps the candidates named in ``good``; later candidates finish first, to shuffle order."""

    def __init__(self, good: set[int], reason: RejectReason = "tests pass before the fix") -> None:
        self.good = good
        self.reason = reason
        self.stop = StopToken()
        self.checked: list[int] = []
        self._lock = threading.Lock()

    def halt(self) -> None:
        self.stop.stop()

    def check(self, item: Candidate) -> CandidateResult:
        number = int(item.commit, 16)
        time.sleep(0.02 * (number % 3))
        with self._lock:
            self.checked.append(number)
        kept = number in self.good
        return CandidateResult(item, None if kept else self.reason, CheckRecord(), None)


def numbers(results: tuple[CandidateResult, ...]) -> list[int]:
    return [int(r.candidate.commit, 16) for r in results]


@pytest.mark.parametrize("jobs", [1, 2, 4])
def test_checking_stops_once_max_tasks_are_kept_whatever_the_jobs(jobs: int) -> None:
    checker = ScriptedChecker(good={1, 3, 4, 6})
    outcome = validate([candidate(n) for n in range(10)], checker, max_tasks=3, jobs=jobs)
    assert numbers(outcome.results) == [0, 1, 2, 3, 4]
    assert [r.kept for r in outcome.results] == [False, True, False, True, True]
    assert outcome.rejected == {"tests pass before the fix": 2}
    if jobs == 1:
        assert checker.checked == [0, 1, 2, 3, 4]


def test_at_most_three_times_max_candidates_are_checked() -> None:
    checker = ScriptedChecker(good=set())
    outcome = validate([candidate(n) for n in range(20)], checker, max_tasks=2, jobs=2)
    assert numbers(outcome.results) == [0, 1, 2, 3, 4, 5]
    assert sorted(checker.checked) == [0, 1, 2, 3, 4, 5]
    assert outcome.kept == []


def test_progress_reports_every_checked_candidate() -> None:
    seen: list[tuple[int, int]] = []
    checker = ScriptedChecker(good={0})
    validate(
        [candidate(n) for n in range(3)],
        checker,
        max_tasks=5,
        progress=lambda number, total, result: seen.append((number, total)),
    )
    assert sorted(seen) == [(1, 3), (2, 3), (3, 3)]


def test_progress_comes_in_order_and_calls_kept_only_what_the_suite_holds() -> None:
    seen: list[tuple[int, bool]] = []
    checker = ScriptedChecker(good={1, 2, 3, 4})
    outcome = validate(
        [candidate(n) for n in range(8)],
        checker,
        max_tasks=2,
        jobs=4,  # later candidates finish first, and some past the cut-off are checked
        progress=lambda number, total, result: seen.append((number, result.kept)),
    )
    assert seen == [(1, False), (2, True), (3, True)]
    assert len(outcome.kept) == sum(kept for _, kept in seen)


def test_an_interruption_stops_the_running_checks() -> None:
    class Interrupting(ScriptedChecker):
        def check(self, item: Candidate) -> CandidateResult:
            raise KeyboardInterrupt

    checker = Interrupting(good=set())
    with pytest.raises(KeyboardInterrupt):
        validate([candidate(n) for n in range(3)], checker, max_tasks=1)
    assert checker.stop.stopped


def test_a_commit_past_the_last_one_needed_gives_up_its_wait_for_a_slot() -> None:
    """Commit 0 completes --max 1 while commit 1 waits for the only slot: 1 is never run."""
    slots = RunSlots(1)
    blocker_holds = threading.Event()
    release = threading.Event()
    ran: list[int] = []

    def block() -> None:
        with slots.held((-1, 0)):
            blocker_holds.set()
            release.wait(timeout=30)

    class SlotChecker(ScriptedChecker):
        def check(self, item: Candidate) -> CandidateResult:
            number = int(item.commit, 16)
            if number == 0:  # kept once commit 1 is queued behind the blocker
                while slots.waiting == 0:
                    time.sleep(0.001)
                return CandidateResult(item, None, CheckRecord(), None)
            with slots.held((number, 0)):
                ran.append(number)
            return CandidateResult(item, "tests pass before the fix", CheckRecord(), None)

    def settled(place: int) -> None:
        slots.close_after(place)
        release.set()

    blocker = threading.Thread(target=block)
    blocker.start()
    blocker_holds.wait(timeout=30)
    checker = SlotChecker(good=set())
    outcome = validate(
        [candidate(n) for n in range(2)], checker, max_tasks=1, jobs=2, settled=settled
    )
    blocker.join()
    assert numbers(outcome.results) == [0]
    assert ran == []
    assert slots.waiting == 0
