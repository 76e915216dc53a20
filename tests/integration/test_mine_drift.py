"""Acceptance: older history that fails on today's toolchain is found by sampling and skipped.

Before "Support today's interpreter", every commit fails a test that checks the runtime (as a
removed API or a changed time zone rule would). Sampling every second candidate finds the range,
reports it with the failing test its samples share, and skips its candidates: the only runs
there are the samples', one suite run each.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harnessdrive.mining.drift import SAMPLES_FOLDER
from harnessdrive.mining.mine import MineOptions, mine
from harnessdrive.testing.repo_builder import RepoBuilder

pytestmark = pytest.mark.slow  # samples and mines a history

TEST_COMMAND = "{python} -m pytest -q -p no:cacheprovider tests"
OLD_RUNTIME = "import sys\n\n\ndef test_runtime():\n    assert sys.version_info < (3, 0)\n"
TODAYS_RUNTIME = "import sys\n\n\ndef test_runtime():\n    assert sys.version_info >= (3, 0)\n"


def build(path: Path) -> tuple[list[str], list[str]]:
    """(the old commits, the new ones), newest first."""
    repo = RepoBuilder(path)
    values = {f"calc_{i}.py": "VALUE = 0\n" for i in range(7)}
    repo.commit(
        "Start",
        {**values, "tests/test_runtime.py": OLD_RUNTIME, "tests/test_base.py": "def test_ok():\n"
         "    pass\n"},
    )  # fmt: skip

    def good(i: int) -> str:
        return repo.commit(
            f"Set value {i} to one",
            {
                f"calc_{i}.py": "VALUE = 1\n",
                f"tests/test_value_{i}.py": (
                    f"import calc_{i}\n\n\ndef test_value():\n    assert calc_{i}.VALUE == 1\n"
                ),
            },
        )

    old = [good(i) for i in range(5)]
    repo.commit("Support today's interpreter", {"tests/test_runtime.py": TODAYS_RUNTIME})
    new = [good(i) for i in range(5, 7)]
    repo.checkout()
    repo.close()
    return old[::-1], new[::-1]


def test_a_range_that_fails_on_todays_toolchain_is_reported_and_skipped(tmp_path: Path) -> None:
    old, new = build(tmp_path / "calc")
    options = MineOptions(
        repo=tmp_path / "calc",
        since="2000-01-01",
        test_command=TEST_COMMAND,
        validate=True,
        test_timeout=60,
        output=tmp_path / "suite",
        sample_every=2,
    )
    summary = mine(options, sandbox="none", python=sys.executable).summary
    assert [t.commit for t in summary.tasks] == new
    assert summary.drift is not None
    # Candidates newest first: the two new, then the five old; places 1, 3 and 5 sampled.
    assert [(s.commit, s.passed) for s in summary.drift.samples] == [
        (new[1], True),
        (old[1], False),
        (old[3], False),
    ]
    [found] = summary.drift.ranges
    assert (found.newest, found.oldest, found.commits, found.samples) == (old[1], old[4], 4, 2)
    assert found.failing == ["tests.test_runtime::test_runtime"]
    assert summary.counts.drift == 4
    # The candidate between the last passing sample and the first failing one is checked.
    assert [t.commit for t in summary.rejected_tasks] == [old[0]]
    logs = tmp_path / "suite" / "logs"
    in_range = old[1:]
    assert not any((logs / sha[:12]).exists() for sha in in_range)
    runs = sorted(p.parent.name for p in (logs / SAMPLES_FOLDER).rglob("grade-tests.log"))
    assert runs == sorted(sha[:12] for sha in (new[1], old[1], old[3]))
    markdown = (tmp_path / "suite" / "summary.md").read_text()
    assert "Cannot be mined on this toolchain: 4 commits from" in markdown
    assert "tests.test_runtime::test_runtime" in markdown
