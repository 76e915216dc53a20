"""Acceptance: a HEAD with a known failure is mined once that failure is left out.

HEAD fails one test that needs a time zone the copy does not set. Without help mining stops and
names the failing test; ``--known-failures head`` records it and leaves it out of every run and
every task's command; a file of node ids does the same.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from harnessdrive.errors import UserError
from harnessdrive.mining.mine import MineOptions, mine
from harnessdrive.testing.repo_builder import RepoBuilder

pytestmark = pytest.mark.slow  # mines a history three times

TEST_COMMAND = "{python} -m pytest -q -p no:cacheprovider tests"
TZ_TEST = (
    "import os\n\n\ndef test_needs_tz():\n    assert os.environ.get('TZ') == 'America/New_York'\n"
)


def build(path: Path) -> str:
    repo = RepoBuilder(path)
    repo.commit("Start", {"calc.py": "VALUE = 0\n", "tests/test_tz.py": TZ_TEST})
    fix = repo.commit(
        "Set the value to one",
        {
            "calc.py": "VALUE = 1\n",
            "tests/test_value.py": "import calc\n\n\ndef test_value():\n"
            "    assert calc.VALUE == 1\n",
        },
    )
    repo.checkout()
    repo.close()
    return fix


def options(tmp_path: Path, known: str | None) -> MineOptions:
    return MineOptions(
        repo=tmp_path / "calc",
        since="2000-01-01",
        test_command=TEST_COMMAND,
        validate=True,
        test_timeout=60,
        output=tmp_path / "suite",
        known_failures=known,
        sample_every=0,
    )


def test_known_failures_at_head_are_recorded_and_left_out(tmp_path: Path) -> None:
    fix = build(tmp_path / "calc")
    with pytest.raises(UserError) as stopped:
        mine(options(tmp_path, None), sandbox="none", python=sys.executable)
    assert "(1 test fails: tests.test_tz::test_needs_tz)" in str(stopped.value)
    assert "--known-failures" in str(stopped.value)

    summary = mine(options(tmp_path, "head"), sandbox="none", python=sys.executable).summary
    assert [t.commit for t in summary.tasks] == [fix]
    assert summary.known_failures == ["tests/test_tz.py::test_needs_tz"]
    task = tomllib.loads((tmp_path / "suite" / "tasks" / fix[:12] / "task.toml").read_text())
    assert task["grade"]["command"].endswith("--deselect tests/test_tz.py::test_needs_tz")

    listed = tmp_path / "known.txt"
    listed.write_text("# fails without TZ\ntests/test_tz.py::test_needs_tz\n")
    again = mine(options(tmp_path, str(listed)), sandbox="none", python=sys.executable).summary
    assert [t.commit for t in again.tasks] == [fix]
