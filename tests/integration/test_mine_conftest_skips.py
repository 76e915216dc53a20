"""A repository whose conftest.py skips tests (here: those marked ``service`` without
``SERVICE_URL``): the HEAD report names the skipped tests and their reason, and a commit whose
own tests are skipped with its fix is rejected as skipping, not passed and not failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.testing.suites import FAST_PYTEST
from tests.integration.test_mine_cli import APP, DOUBLE_FIXED, mine

CONFTEST = """import os

import pytest


def pytest_collection_modifyitems(config, items):
    if os.environ.get("SERVICE_URL"):
        return
    for item in items:
        if item.get_closest_marker("service"):
            item.add_marker(pytest.mark.skip(reason="SERVICE_URL not set"))
"""
BASE_TESTS = """import pytest


def test_base():
    pass


@pytest.mark.service
def test_ping():
    pass
"""
TRIPLE_FIXED = DOUBLE_FIXED.replace(
    "def triple(x):\n    return x", "def triple(x):\n    return 3 * x"
)
TRIPLE_TESTS = """import pytest

import app


@pytest.mark.service
def test_triple():
    assert app.triple(2) == 6
"""


def test_tests_a_conftest_skips_are_named_at_head_and_not_passed_at_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit(
        "Start",
        {
            "app.py": APP,
            "pytest.ini": "[pytest]\nmarkers =\n    service: needs the service\n",
            "tests/conftest.py": CONFTEST,
            "tests/test_base.py": BASE_TESTS,
        },
    )
    double_tests = "import app\n\n\ndef test_double():\n    assert app.double(2) == 4\n"
    repo.commit("Fix double", {"app.py": DOUBLE_FIXED, "tests/test_double.py": double_tests})
    repo.commit("Fix triple", {"app.py": TRIPLE_FIXED, "tests/test_triple.py": TRIPLE_TESTS})
    repo.close()
    out = tmp_path / "suite"
    argv = ["--validate", "--test-cmd", FAST_PYTEST, "-o", str(out), "--json"]
    assert mine(str(tmp_path / "repo"), *argv) == 0
    summary = json.loads(capsys.readouterr().out)
    skipped_at_head = ["tests.test_base::test_ping", "tests.test_triple::test_triple"]
    assert summary["head_skips"]["reasons"] == [
        {"reason": "SERVICE_URL not set", "tests": 2, "names": skipped_at_head}
    ]
    markdown = (out / "summary.md").read_text()
    assert f"SERVICE_URL not set (2: {', '.join(skipped_at_head)})" in markdown
    assert [t["subject"] for t in summary["tasks"]] == ["Fix double"]
    (rejected,) = summary["rejected_tasks"]
    assert (rejected["subject"], rejected["reason"]) == ("Fix triple", "tests skip with the fix")
    assert "skipped: tests/test_triple.py::test_triple (SERVICE_URL not set)" in rejected["detail"]
