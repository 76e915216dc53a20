"""Ranges of history that cannot be mined, from the samples' results."""

from __future__ import annotations

from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.drift import Sample, find_ranges, sample_places


def candidate(n: int) -> Candidate:
    sha = f"{n:040x}"
    return Candidate(
        id=sha[:12], subject=f"Change {n}", body="", commit=sha, parent="f" * 40,
        hidden_tests=["tests/test_a.py"], gold_files=["a.py"], gold_lines=1,
        changes_dependencies=False, files=[],
    )  # fmt: skip


CANDIDATES = [candidate(n) for n in range(12)]


def sample(index: int, *failing: str) -> Sample:
    return Sample(index, CANDIDATES[index], not failing, failing)


def numbers(found: tuple[Candidate, ...]) -> list[int]:
    return [int(c.commit, 16) for c in found]


def test_every_nth_candidate_is_sampled() -> None:
    assert sample_places(12, 3) == [2, 5, 8, 11]
    assert sample_places(2, 3) == []
    assert sample_places(5, 0) == []


def test_old_history_failing_the_same_test_is_one_range_to_the_end() -> None:
    samples = [sample(2), sample(5, "t::a", "t::b"), sample(8, "t::a"), sample(11, "t::a", "t::c")]
    [found] = find_ranges(CANDIDATES, samples)
    assert numbers(found.candidates) == list(range(5, 12))
    assert (found.failing, found.samples) == (("t::a",), 3)


def test_a_failing_sample_between_passing_ones_is_a_range_of_one() -> None:
    samples = [sample(2), sample(5, "t::a"), sample(8), sample(11)]
    [found] = find_ranges(CANDIDATES, samples)
    assert numbers(found.candidates) == [5]


def test_different_failures_make_separate_ranges() -> None:
    samples = [sample(2, "t::a"), sample(5, "t::b"), sample(8), sample(11)]
    ranges = find_ranges(CANDIDATES, samples)
    assert [numbers(r.candidates) for r in ranges] == [[2], [5]]
    assert [r.failing for r in ranges] == [("t::a",), ("t::b",)]
    assert find_ranges(CANDIDATES, [sample(2), sample(5)]) == []
