"""The test launcher: its own junit report for unittest runs, readable whatever the tests print;
no bytecode written into the grading copy it runs in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harnessdrive.grading.junit import count_cases, read_cases
from harnessdrive.grading.runners import install_launcher

TESTS = """import unittest


class Awkward(unittest.TestCase):
    def test_passes(self):
        pass

    def test_fails_with_escape_codes(self):
        self.assertEqual("\\x1b[31mred <&> \\"quoted\\"", "\\x00")

    @unittest.skip("needs a \\x07 bell & <markup>")
    def test_skipped(self):
        pass

    def test_errors(self):
        raise RuntimeError("lone \\ud800 surrogate")

    def test_subtests(self):
        for value in range(3):
            with self.subTest(value=value):
                self.assertLess(value, 2)
"""


def test_a_report_with_control_characters_and_markup_reads_back_with_every_case(
    tmp_path: Path,
) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_awkward.py").write_text(TESTS)
    launcher = install_launcher(tmp_path / "runner")
    junit = tmp_path / "junit.xml"
    done = subprocess.run(
        [sys.executable, "-s", str(launcher), "unittest", "discover", "-s", "tests"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HARNESSDRIVE_JUNIT": str(junit)},
        capture_output=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    cases = {case.name: case.outcome for case in read_cases(junit)}
    assert cases == {
        "test_passes": "passed",
        "test_fails_with_escape_codes": "failed",
        "test_skipped": "skipped",
        "test_errors": "error",
        "test_subtests (value=2)": "failed",
    }
    counts = count_cases(read_cases(junit))
    assert (counts.total, counts.passed, counts.failed, counts.errors, counts.skipped) == (
        5,
        1,
        2,
        1,
        1,
    )
    text = junit.read_text(encoding="utf-8")
    assert "\x1b" not in text and "\x07" not in text
    assert "needs a \ufffd bell &amp; &lt;markup&gt;" in text
    # Each failure carries the traceback unittest printed for it (formatted once, reused).
    assert text.count("Traceback (most recent call last)") == 3
    assert 'raise RuntimeError("lone' in text and "AssertionError: 2 not less than 2" in text


def test_the_launcher_writes_no_bytecode_into_the_copy(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("VALUE = 3\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "test_value.py").write_text(
        "import unittest\nfrom pkg import VALUE\n\n\nclass V(unittest.TestCase):\n"
        "    def test_value(self):\n        self.assertEqual(VALUE, 3)\n"
    )
    launcher = install_launcher(tmp_path / "runner")
    done = subprocess.run(
        [sys.executable, "-s", str(launcher), "unittest", "discover", "-s", "tests", "-t", "."],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HARNESSDRIVE_JUNIT": str(tmp_path / "junit.xml")},
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert count_cases(read_cases(tmp_path / "junit.xml")).passed == 1
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("__pycache__")) == []
