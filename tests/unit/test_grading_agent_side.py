"""What the agent's change does to the grading copy is the agent's: a grading setup that fails
only because of it is its fail (one that fails on the base state as well is the machinery's),
and a file put where a folder of a removed path was is graded, not an error."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessdrive.errors import SetupFailedError
from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.verdict import Verdict
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.tasks import load_task
from harnessdrive.testing.suites import TaskFiles, write_task
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot
from tests.conftest import add_task

COMPILES = '{python} -c "import calc"'


def grade_change(
    tmp_path: Path, task: TaskFiles, calc: str, edit: Callable[[Path], None] | None = None
) -> Verdict:
    loaded = load_task(write_task(tmp_path / "tasks", task))
    snapshot = build_snapshot(loaded.repo_path, None, tmp_path / "snapshot")
    workspace = copy_snapshot(snapshot, tmp_path / "workspace")
    (workspace / "calc.py").write_text(calc)
    if edit is not None:
        edit(workspace)
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(
        task=loaded,
        snapshot=snapshot,
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        sandbox=get_sandbox("none"),
        python=sys.executable,
    )
    return grade(setup, capture_changes(snapshot, workspace))


def test_a_setup_the_agents_code_breaks_is_the_agents_fail(tmp_path: Path) -> None:
    verdict = grade_change(tmp_path, add_task(setup=[COMPILES]), "def add(a, b) return a +\n")
    assert verdict.outcome == "fail"
    assert verdict.error == "setup failed with the agent's change; it succeeds on the base state"
    assert (tmp_path / "logs" / "grade-setup-base.log").is_file()


def test_a_setup_that_fails_on_the_base_state_too_is_not_the_agents(tmp_path: Path) -> None:
    files = {**add_task().files, "helper.py": "def broken( return\n"}
    broken = add_task(setup=['{python} -c "import calc, helper"'], files=files)
    with pytest.raises(SetupFailedError):
        grade_change(tmp_path, broken, "def add(a, b) return a +\n")


def test_a_file_where_a_folder_of_a_removed_path_was_is_graded(tmp_path: Path) -> None:
    files = {**add_task().files, "old/test_old.py": "def test_old():\n    assert False\n"}
    task = add_task(files=files, extra={"grade": {"removed": ["old/test_old.py"]}})

    def file_for_folder(workspace: Path) -> None:
        shutil.rmtree(workspace / "old")
        (workspace / "old").write_text("not a folder\n")

    verdict = grade_change(tmp_path, task, "def add(a, b):\n    return a + b\n", file_for_folder)
    assert verdict.outcome == "pass"


def test_a_file_where_the_folder_of_restored_paths_was_is_graded(tmp_path: Path) -> None:
    task = add_task(protected=[], extra={"grade": {"restored": ["tests/**"]}})

    def file_for_folder(workspace: Path) -> None:
        shutil.rmtree(workspace / "tests")
        (workspace / "tests").write_text("not a folder\n")

    verdict = grade_change(tmp_path, task, "def add(a, b):\n    return a + b\n", file_for_folder)
    assert verdict.outcome in ("pass", "fail", "tampered"), verdict
