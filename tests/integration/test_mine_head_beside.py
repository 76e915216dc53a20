"""HEAD's check runs beside the candidates' checks, not before them.

HEAD's whole suite holds a test that waits for a sign that only a candidate's run gives (its
own test, run on the buggy parent, leaves a file outside the copy). Checked alone first, HEAD
would wait in vain and fail; checked beside the candidates, the other worker runs the
candidate's fast check meanwhile and HEAD passes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from harnessdrive.mining.mine import MineOptions, mine
from harnessdrive.testing.repo_builder import RepoBuilder

TEST_COMMAND = "{python} -m unittest discover -s tests -q"
WAIT_SECONDS = 60
"""How long HEAD's test waits for the sign before it fails (a bound, never a measured time)."""


def test_heads_check_overlaps_the_candidates_checks(tmp_path: Path) -> None:
    sign = tmp_path / "a candidate ran"
    repo = RepoBuilder(tmp_path / "calc")
    repo.commit(
        "Start",
        {
            "calc.py": "def add(a, b):\n    return a - b\n",
            "tests/test_start.py": "import unittest\n\n\nclass Start(unittest.TestCase):\n"
            "    def test_it(self):\n        pass\n",
        },
    )
    add_test = (
        "import pathlib\nimport unittest\n\nimport calc\n\n"
        "if calc.add(2, 3) != 5:  # only on the parent, where add is still wrong\n"
        f"    pathlib.Path({str(sign)!r}).touch()\n\n\n"
        "class Add(unittest.TestCase):\n"
        "    def test_it(self):\n        self.assertEqual(calc.add(2, 3), 5)\n"
    )
    sha = repo.commit(
        "Fix add",
        {"calc.py": "def add(a, b):\n    return a + b\n", "tests/test_add.py": add_test},
    )
    repo.commit(
        "Test that waits for a candidate's run",
        {
            "tests/test_wait.py": "import pathlib\nimport time\nimport unittest\n\n\n"
            "class Wait(unittest.TestCase):\n"
            "    def test_it(self):\n"
            f"        deadline = time.monotonic() + {WAIT_SECONDS}\n"
            f"        while not pathlib.Path({str(sign)!r}).exists():\n"
            "            self.assertLess(time.monotonic(), deadline)\n"
            "            time.sleep(0.05)\n",
        },
    )
    repo.checkout()
    repo.close()
    options = MineOptions(
        repo=tmp_path / "calc",
        since="2000-01-01",
        test_command=TEST_COMMAND,
        validate=True,
        jobs=2,
        output=tmp_path / "suite",
    )
    result = mine(options, sandbox="none", python=sys.executable)
    assert sign.exists()
    assert result.summary.head_check is not None and result.summary.head_check.exit_code == 0
    assert [task.commit for task in result.summary.tasks] == [sha]
