"""Mining records each kept task's per-test outcomes after the fix as the reference's.

The hidden file may skip both of its tests, yet one ran and passed after the fix: grading then
holds an agent to that test passing, and leaves the other neutral.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.grading import reference_outcomes
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.testing.suites import FAST_PYTEST
from tests.integration.test_mine_cli import APP, DOUBLE_FIXED, mine

HIDDEN = """import os

import pytest

import app


@pytest.mark.skipif(not hasattr(app, "double"), reason="no double yet")
def test_double():
    assert app.double(2) == 4


@pytest.mark.skipif("SERVICE_URL" not in os.environ, reason="no service here")
def test_against_the_service():
    assert app.double(1) == 2
"""


def test_a_mined_task_holds_the_outcomes_of_its_tests_after_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Start", {"app.py": APP, "tests/test_base.py": "def test_base():\n    pass\n"})
    repo.commit("Fix double", {"app.py": DOUBLE_FIXED, "tests/test_double.py": HIDDEN})
    repo.close()
    out = tmp_path / "suite"
    argv = ["--validate", "--test-cmd", FAST_PYTEST, "-o", str(out), "--json"]
    assert mine(str(tmp_path / "repo"), *argv) == 0
    assert [t["subject"] for t in json.loads(capsys.readouterr().out)["tasks"]] == ["Fix double"]
    (task,) = load_suite(out).tasks
    assert (task.folder / reference_outcomes.RECORD_FILE).is_file()
    assert reference_outcomes.fresh(task) == {
        "tests/test_double.py::test_double": "passed",
        "tests/test_double.py::test_against_the_service": "skipped",
    }
