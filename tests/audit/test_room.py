"""Validity: a task whose reference needs most of a limit is broken, saying which limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.testing.suites import write_suite
from tests.conftest import ADD_FIXED, add_task

# The reference takes 4 s and a little: more than half of a 7 s limit, with 3 s left for the
# runner's own start on a busy machine (the twin's run goes side by side with it).
SLOW_FIX = "import time\n\ntime.sleep(4)\n\n\n" + ADD_FIXED


@pytest.mark.parametrize(("limit", "broken"), [(7, True), (30, False)])
def test_a_reference_that_needs_most_of_the_grading_limit_breaks_the_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], limit: int, broken: bool
) -> None:
    task = add_task(solution={"calc.py": SLOW_FIX}, grade_timeout=limit)
    suite = write_suite(tmp_path, [task])
    capsys.readouterr()
    code = run_cli(["check", str(suite), "--json", "--sandbox", "none"])
    (found,) = json.loads(capsys.readouterr().out)["tasks"]
    room = [p for p in found["problems"] if "of the" in p and "grade.timeout" in p]
    assert (code, bool(room)) == ((1, True) if broken else (0, False)), found["problems"]
    if broken:
        assert room[0].startswith("the reference's tests took ")
        assert "of the 7 s limit (grade.timeout)" in room[0]
