"""Counterexamples shrink inside files: the lines of a text part, to a fixpoint, with a cap on
the tries (oracle answers) one counterexample may cost."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harnessdrive.grading.differential.minimise import shrink


def needs_two_lines(cases: Sequence[Any]) -> list[bool]:
    # The candidate disagrees while a file holds both the "[x]" and the "y=" line.
    return [
        any("[x]" in f and "y=1" in f for f in case["files"]) and "keep" in case["names"]
        for case in cases
    ]


def case_of(lines: int) -> dict[str, Any]:
    text = "\n".join(
        ["[x]" if i == 17 else "y=1" if i == 40 else f"line {i}" for i in range(lines)]
    )
    return {"files": ["other\nfile", text], "names": ["a", "keep", "b"], "note": "x"}


def test_lines_inside_files_shrink_to_the_ones_that_matter() -> None:
    shrunk = shrink(case_of(65), ["files", "names"], needs_two_lines)
    assert shrunk.case["files"] == ["[x]\ny=1"]
    assert shrunk.case["names"] == ["keep"]
    assert shrunk.case["note"] == "x"


def test_a_string_part_loses_its_lines_too() -> None:
    case = {"config": "a\nb\nneeded\nc\nd", "other": 1}
    shrunk = shrink(case, ["config"], lambda cases: ["needed" in c["config"] for c in cases])
    assert shrunk.case == {"config": "needed", "other": 1}


def test_the_tries_stop_at_the_cap() -> None:
    asked: list[int] = []

    def counting(cases: Sequence[Any]) -> list[bool]:
        asked.append(len(cases))
        return needs_two_lines(cases)

    shrunk = shrink(case_of(65), ["files", "names"], counting, max_tries=7)
    assert sum(asked) <= 7 and shrunk.tries <= 7
    assert needs_two_lines([shrunk.case]) == [True]  # still a counterexample
