"""``grade.removed``: files deleted from the grading copy along with the hidden files.

A mined task whose commit deleted a test must not run that test against the new code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harnessdrive.errors import SetupFailedError
from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.tasks import load_task
from harnessdrive.testing.suites import TaskFiles, write_task
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot
from tests.conftest import ADD_FIXED, add_task

OLD_TEST = "from calc import add\n\n\ndef test_old():\n    assert add(1, 1) == 0\n"


def graded(tmp_path: Path, task: TaskFiles) -> str:
    loaded = load_task(write_task(tmp_path / "tasks", task))
    snapshot = build_snapshot(loaded.repo_path, None, tmp_path / "snapshot")
    workspace = copy_snapshot(snapshot, tmp_path / "workspace")
    (workspace / "calc.py").write_text(ADD_FIXED)
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(
        task=loaded,
        snapshot=snapshot,
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        sandbox=get_sandbox("none"),
        python=sys.executable,
    )
    return grade(setup, capture_changes(snapshot, workspace)).outcome


@pytest.mark.parametrize(("removed", "outcome"), [([], "fail"), (["tests/test_old.py"], "pass")])
def test_a_removed_test_no_longer_judges_the_change(
    tmp_path: Path, removed: list[str], outcome: str
) -> None:
    base = add_task()
    files = {**base.files, "tests/test_old.py": OLD_TEST}  # asserts the bug
    task = add_task(files=files, extra={"grade": {"removed": removed}})
    assert graded(tmp_path, task) == outcome


def test_a_failing_setup_is_its_own_error(tmp_path: Path) -> None:
    with pytest.raises(SetupFailedError):
        graded(tmp_path, add_task(setup=["exit 3"]))


@pytest.mark.parametrize("in_its_place", ["link", "file"])
def test_a_removed_path_under_a_folder_the_change_replaced_is_left_alone(
    tmp_path: Path, in_its_place: str
) -> None:
    # The change puts a link (to a folder outside the copy) or a file where the removed test's
    # folder was: nothing is removed through it, and the grade is the agent's, not an error.
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "test_old.py").write_text(OLD_TEST)
    base = add_task()
    files = {**base.files, "old/test_old.py": OLD_TEST}
    task = add_task(files=files, extra={"grade": {"removed": ["old/test_old.py"]}})
    loaded = load_task(write_task(tmp_path / "tasks", task))
    snapshot = build_snapshot(loaded.repo_path, None, tmp_path / "snapshot")
    workspace = copy_snapshot(snapshot, tmp_path / "workspace")
    (workspace / "calc.py").write_text(ADD_FIXED)
    (workspace / "old" / "test_old.py").unlink()
    (workspace / "old").rmdir()
    if in_its_place == "link":
        (workspace / "old").symlink_to(victim)
    else:
        (workspace / "old").write_text("not a folder\n")
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(
        task=loaded,
        snapshot=snapshot,
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        sandbox=get_sandbox("none"),
        python=sys.executable,
    )
    verdict = grade(setup, capture_changes(snapshot, workspace))
    assert verdict.outcome in ("pass", "fail", "tampered"), verdict
    assert (victim / "test_old.py").read_text() == OLD_TEST
