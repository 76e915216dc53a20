"""``check`` on mined tasks: the reference rewritten with its meaning kept must pass, and a
commit that changed no code is refused."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harnessdrive.checking.cases import TaskCheck
from harnessdrive.checking.mined import wants_rewrite
from harnessdrive.checking.suite import self_test
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import write_suite
from tests.audit import mined_tasks

pytestmark = pytest.mark.slow  # grades four tasks


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TaskCheck]:
    root = tmp_path_factory.mktemp("mined-check")
    tasks = [
        mined_tasks.sound(),
        mined_tasks.exact_shape(),
        mined_tasks.docstring_only(),
        mined_tasks.no_python(),
    ]
    found = self_test(load_suite(write_suite(root, tasks)), logs=root / "logs", jobs=2)
    return {item.task: item for item in found}


def _case(item: TaskCheck, name: str) -> str | None:
    return next((case.outcome for case in item.cases if case.name == name), None)


def test_a_rewrite_of_the_reference_passes_a_sound_task(checked: dict[str, TaskCheck]) -> None:
    item = checked["mined-sound"]
    assert _case(item, "rewritten") == "pass"
    assert item.ok, item.problems


def test_tests_that_pin_the_references_text_are_flagged_with_evidence(
    checked: dict[str, TaskCheck],
) -> None:
    item = checked["mined-shape"]
    assert _case(item, "reference") == "pass"
    assert _case(item, "rewritten") == "fail"
    (problem,) = item.problems
    assert problem.startswith("the hidden tests accept only the reference's exact shape")
    assert "calc.py: total: renamed subtotal to subtotal_v" in problem
    assert "failing: tests/test_calc.py::test_total" in problem
    diff = Path(problem.rsplit("the rewrite: ", 1)[1])
    assert diff.name == "diff.patch" and "subtotal_v" in diff.read_text()


def test_a_commit_that_changed_only_a_docstring_is_refused(checked: dict[str, TaskCheck]) -> None:
    item = checked["mined-docstring"]
    assert _case(item, "reference") == "pass"  # its hidden test reads the docstring
    assert [p for p in item.problems if "metadata.change_kind = 'comments-only'" in p]
    assert not item.ok


def test_a_reference_without_python_is_not_rewritten_and_says_so(
    checked: dict[str, TaskCheck],
) -> None:
    item = checked["mined-data"]
    assert _case(item, "rewritten") is None
    assert "no rewritten reference to check: the reference changes no Python file" in item.notes
    assert item.ok, item.problems


def test_only_a_mined_task_without_a_rewrite_of_its_own_gets_one(tmp_path: Path) -> None:
    own = dataclasses.replace(
        mined_tasks.sound(),
        id="mined-own-rewrite",
        extra={
            **mined_tasks.sound().extra,
            "check": {"fixtures": [{"overlay": "solution", "name": "rewritten", "expect": "pass"}]},
        },
    )
    written = dataclasses.replace(mined_tasks.sound(), id="written", extra={})
    suite = load_suite(write_suite(tmp_path, [mined_tasks.sound(), own, written]))
    wanted = {task.id: wants_rewrite(task) for task in suite.tasks}
    assert wanted == {"mined-sound": True, "mined-own-rewrite": False, "written": False}
