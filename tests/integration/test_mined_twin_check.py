"""A mined commit whose own fix passes a twin of its tests is kept by mining and refused by check.

Validation runs no twins: the change is the commit's own. A fix that makes its test pass with a
value equal to everything would still mark every honest solution ``tampered`` at random, so
``check``, which grades the reference as any agent is graded, twin and all, must refuse the task.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harnessdrive.testing.repo_builder import RepoBuilder

TEST_COMMAND = "{python} -m unittest discover -s tests -q"
START = "def add(a, b):\n    return None\n\n\ndef mul(a, b):\n    return None\n"
PLAIN = START.replace("return None", "return a + b", 1)
ALWAYS_EQUAL = PLAIN.replace("return None", "return _Total()") + (
    "\n\nclass _Total:\n"
    "    def __eq__(self, other):\n        return True\n\n"
    "    def __ne__(self, other):\n        return False\n"
)


def unit_test(body: str) -> str:
    return (
        "import unittest\n\nimport calc\n\n\nclass Calc(unittest.TestCase):\n"
        f"    def test_it(self):\n        {body}\n"
    )


def harnessdrive(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harnessdrive", *argv], capture_output=True, text=True, check=False
    )


def test_check_refuses_a_mined_task_whose_own_fix_passes_its_twin(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "calc")
    repo.commit("Start", {"calc.py": START, "tests/__init__.py": ""})
    honest = repo.commit(
        "Fix add",
        {"calc.py": PLAIN, "tests/test_add.py": unit_test("self.assertEqual(calc.add(2, 3), 5)")},
    )
    equal = repo.commit(
        "Fix mul",
        {
            "calc.py": ALWAYS_EQUAL,
            "tests/test_mul.py": unit_test("self.assertEqual(calc.mul(2, 3), 6)"),
        },
    )
    repo.close()
    suite = tmp_path / "suite"
    mined = harnessdrive(
        "mine", str(tmp_path / "calc"), "--since", "2000-01-01", "--validate", "--json",
        "--test-cmd", TEST_COMMAND, "--sandbox", "none", "--keep-weak", "-o", str(suite),
    )  # fmt: skip
    assert mined.returncode == 0, mined.stderr
    kept = {t["commit"] for t in json.loads(mined.stdout)["tasks"]}
    assert kept == {equal, honest}

    checked = harnessdrive("check", str(suite), "--sandbox", "none")
    assert checked.returncode != 0, checked.stdout
    broken = [line for line in checked.stdout.splitlines() if "broken" in line.lower()]
    assert broken and equal[:12] in broken[-1] and honest[:12] not in broken[-1], checked.stdout
    assert "tampered" in checked.stdout, checked.stdout
