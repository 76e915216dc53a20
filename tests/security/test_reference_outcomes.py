"""The reference's recorded per-test outcomes decide which hidden tests must pass.

A hidden test that a conftest skips on the reference (nothing in the hidden file says so) is
neutral once ``check`` recorded it, while a test the reference passed still has to pass: an
agent that makes it skip is not passed. A record made against other hidden files is ignored.
"""

from __future__ import annotations

from pathlib import Path

from harnessdrive.checking.suite import self_test
from harnessdrive.grading import reference_outcomes
from harnessdrive.tasks import load_task
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import TaskFiles, write_suite
from tests.security.test_verdict_forgery import (
    COMMANDS,
    PY_BUGGY,
    PY_FIXED,
    _skip_in,
    graded,
    graded_in,
)

# The repository's own conftest skips one hidden test where it runs (as a marker would for a
# missing service); the hidden file itself declares nothing.
CONFTEST = """import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if item.name == "test_against_the_service":
            item.add_marker(pytest.mark.skip(reason="no service here"))
"""
HIDDEN = """from calc import add


def test_more():
    assert add(2, 3) == 5


def test_against_the_service():
    assert add(1, 1) == 2
"""
TASK = TaskFiles(
    "conftest-skip",
    files={"calc.py": PY_BUGGY, "tests/__init__.py": "", "tests/conftest.py": CONFTEST},
    hidden={"tests/test_hidden.py": HIDDEN},
    solution={"calc.py": PY_FIXED},
    protected=["tests/**"],
    command=COMMANDS["pytest"],
)


def _checked(tmp_path: Path) -> Path:
    """The task's folder after ``check`` ran once on it (and recorded the reference)."""
    suite = load_suite(write_suite(tmp_path / "suite", [TASK]))
    (report,) = self_test(suite, logs=tmp_path / "check-logs", sandbox="none")
    assert any("reference-outcomes.json" in note for note in report.notes), report
    # The reference failed without the record, and is graded again once it is written.
    assert report.problems == [], report
    assert [c.outcome for c in report.cases if c.name == "reference"] == ["pass"], report
    return suite.tasks[0].folder


def test_without_a_record_a_conftest_skip_fails_even_the_reference(tmp_path: Path) -> None:
    verdict = graded(tmp_path, TASK, {"calc.py": PY_FIXED})
    assert verdict.outcome == "fail"
    assert verdict.hidden is not None and verdict.hidden.hidden_outcomes == {
        "tests/test_hidden.py::test_more": "passed",
        "tests/test_hidden.py::test_against_the_service": "skipped",
    }


def test_check_records_the_reference_and_grading_then_follows_it(tmp_path: Path) -> None:
    folder = _checked(tmp_path)
    record = reference_outcomes.fresh(load_task(folder))
    assert record is not None
    assert record["tests/test_hidden.py::test_against_the_service"] == "skipped"

    reference = graded_in(folder, tmp_path / "reference", {"calc.py": PY_FIXED})
    assert reference.outcome == "pass", reference

    # The agent makes every test skip: test_more, which the reference passed, did not pass.
    dodge = graded_in(folder, tmp_path / "dodge", {"calc.py": _skip_in("pytest")})
    assert dodge.outcome == "fail", dodge
    assert dodge.hidden is not None and "test_more (skipped)" in (dodge.hidden.note or "")


def test_a_record_of_other_hidden_files_is_ignored(tmp_path: Path) -> None:
    folder = _checked(tmp_path)
    hidden = folder / "hidden" / "tests" / "test_hidden.py"
    hidden.write_text(HIDDEN + "\n\ndef test_less():\n    assert add(3, 2) == 5\n")
    assert reference_outcomes.fresh(load_task(folder)) is None
    verdict = graded_in(folder, tmp_path / "after-edit", {"calc.py": PY_FIXED})
    assert verdict.outcome == "fail", verdict
