from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.junit import read_junit
from harnessdrive.grading.verdict import Verdict
from harnessdrive.sandbox.runner import SandboxKind, get_sandbox
from harnessdrive.tasks import load_task
from harnessdrive.testing.suites import TaskFiles, write_task
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot
from tests.conftest import ADD_FIXED, add_task
from tests.sandboxes import require_bwrap

Edit = Callable[[Path], None]


def run_grader(
    tmp_path: Path, task: TaskFiles, edit: Edit | None = None, kind: SandboxKind = "none"
) -> Verdict:
    task_dir = write_task(tmp_path / "tasks", task)
    loaded = load_task(task_dir)
    snap = build_snapshot(loaded.repo_path, None, tmp_path / "snap")
    ws = copy_snapshot(snap, tmp_path / "ws")
    if edit is not None:
        edit(ws)
    changes = capture_changes(snap, ws)
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(
        task=loaded,
        snapshot=snap,
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        sandbox=get_sandbox(kind),
        python=sys.executable,
    )
    return grade(setup, changes)


def fix(ws: Path) -> None:
    (ws / "calc.py").write_text(ADD_FIXED)


def test_a_right_fix_passes_with_visible_and_hidden_counted_apart(tmp_path: Path) -> None:
    task = add_task(visible_command="PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -m pytest -q tests")
    verdict = run_grader(tmp_path, task, fix)
    assert verdict.outcome == "pass"
    assert verdict.visible is not None and verdict.hidden is not None
    assert (verdict.visible.passed, verdict.visible.total, verdict.visible.source) == (
        1,
        1,
        "junit",
    )
    assert (verdict.hidden.passed, verdict.hidden.total) == (3, 3)
    assert verdict.findings == ()
    assert (tmp_path / "logs" / "junit-tests.xml").is_file()
    # Both runs' copies, the deciding one and the twin's, are gone.
    assert list((tmp_path / "scratch").glob("*/grading-copy")) == []
    assert verdict.hidden.twins == 1
    assert (tmp_path / "logs" / "junit-tests-twin.xml").is_file()


def test_no_change_fails_and_counts_the_failures(tmp_path: Path) -> None:
    verdict = run_grader(tmp_path, add_task())
    assert verdict.outcome == "fail"
    assert verdict.hidden is not None
    assert (verdict.hidden.passed, verdict.hidden.failed, verdict.hidden.total) == (0, 3, 3)


FORCE_PASS = (
    "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
)


def write(rel: str, text: str) -> Edit:
    def edit(ws: Path) -> None:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)

    return edit


@pytest.mark.parametrize(
    ("edit", "code", "path"),
    [
        (write("conftest.py", FORCE_PASS), "test-runner-hook", "conftest.py"),
        (write("sub/conftest.py", FORCE_PASS), "test-runner-hook", "sub/conftest.py"),
        (write("tests/test_visible.py", "def test_ok():\n    pass\n"), "protected-path", None),
        (write("sitecustomize.py", "import os\n"), "interpreter-hook", "sitecustomize.py"),
        (write("usercustomize.py", "import os\n"), "interpreter-hook", "usercustomize.py"),
        (write("evil.pth", "import os\n"), "interpreter-hook", "evil.pth"),
        (write("pytest.ini", "[pytest]\naddopts = -x\n"), "test-config", "pytest.ini"),
        (write("pyproject.toml", "[tool.pytest.ini_options]\naddopts='-q'\n"), "test-config", None),
        (write("setup.cfg", "[tool:pytest]\naddopts = -q\n"), "test-config", "setup.cfg"),
        (write("tox.ini", "[pytest]\naddopts = -q\n"), "test-config", "tox.ini"),
        (write("junit.xml", "<testsuite tests='3'/>"), "fake-report", "junit.xml"),
        (write("out/results.xml", "<testsuites><testsuite/></testsuites>"), "fake-report", None),
        (write("reward.txt", "1\n"), "fake-report", "reward.txt"),
    ],
)
def test_every_tamper_finding_makes_the_outcome_tampered(
    tmp_path: Path, edit: Edit, code: str, path: str | None
) -> None:
    def both(ws: Path) -> None:
        fix(ws)
        edit(ws)

    verdict = run_grader(tmp_path, add_task(), both)
    assert verdict.outcome == "tampered"
    assert code in {f.code for f in verdict.findings}
    if path is not None:
        assert path in {f.path for f in verdict.findings}


def test_a_symlink_out_of_the_tree_is_a_finding_and_is_not_followed(tmp_path: Path) -> None:
    def edit(ws: Path) -> None:
        fix(ws)
        (ws / "tests" / "test_visible.py").unlink()
        os.symlink("/dev/null", ws / "tests" / "test_visible.py")
        os.symlink("../../outside", ws / "escape")

    verdict = run_grader(tmp_path, add_task(), edit)
    codes = {(f.code, f.path) for f in verdict.findings}
    assert ("symlink-escape", "escape") in codes
    assert ("symlink-escape", "tests/test_visible.py") in codes
    assert verdict.outcome == "tampered"


def test_unrelated_settings_in_pyproject_are_not_a_finding(tmp_path: Path) -> None:
    task = add_task(
        files={
            "calc.py": "def add(a, b):\n    return a - b\n",
            "pyproject.toml": "[project]\nname = 'calc'\n",
        }
    )
    verdict = run_grader(
        tmp_path, task, lambda ws: (fix(ws), write("pyproject.toml", "[project]\nname='c2'\n")(ws))
    )
    assert verdict.outcome == "pass"


def test_protected_changes_are_not_graded(tmp_path: Path) -> None:
    # The agent "fixes" the visible test to expect subtraction; the original is graded instead.
    def edit(ws: Path) -> None:
        (ws / "tests" / "test_visible.py").write_text(
            "from calc import add\n\n\ndef test_small():\n    assert add(1, 1) == 0\n"
        )

    verdict = run_grader(tmp_path, add_task(hidden={}), edit)
    assert verdict.excluded_paths == ("tests/test_visible.py",)
    assert verdict.hidden is not None and verdict.hidden.failed == 1
    assert verdict.outcome == "tampered"


def test_exit_zero_without_a_junit_report_is_not_a_pass(tmp_path: Path) -> None:
    # Code under test that ends the process early leaves no report: never a pass.
    quitter = "import os\nos._exit(0)\n\ndef add(a, b):\n    return a + b\n"
    verdict = run_grader(tmp_path, add_task(), write("calc.py", quitter))
    assert verdict.hidden is not None and verdict.hidden.exit_code == 0
    assert verdict.hidden.note is not None and "no junit report" in verdict.hidden.note
    assert verdict.outcome == "fail"


def test_commands_without_junit_are_counted_by_exit_code(tmp_path: Path) -> None:
    task = add_task(command="{python} -c 'import calc, sys; sys.exit(calc.add(2, 2) != 4)'")
    unfixed = run_grader(tmp_path / "a", task)
    assert unfixed.outcome == "fail"
    assert unfixed.hidden is not None and unfixed.hidden.source == "exit_code"
    verdict = run_grader(tmp_path / "b", task, fix)
    assert verdict.outcome == "pass"
    assert (verdict.hidden.passed, verdict.hidden.total) == (1, 1)  # type: ignore[union-attr]


def test_junit_counts_errors_skips_and_both_roots(tmp_path: Path) -> None:
    report = tmp_path / "r.xml"
    report.write_text(
        "<testsuites><testsuite>"
        "<testcase name='a'/><testcase name='b'><failure/></testcase>"
        "<testcase name='c'><error/></testcase><testcase name='d'><skipped/></testcase>"
        "</testsuite></testsuites>"
    )
    counts = read_junit(report)
    assert (counts.total, counts.passed, counts.failed, counts.errors, counts.skipped) == (
        4,
        1,
        1,
        1,
        1,
    )
    report.write_text("<testsuite><testcase name='a'/></testsuite>")
    assert read_junit(report).passed == 1


# Imported by the visible run, this leaves a mark in the copy and in HOME; imported again where
# a mark exists, it adds right. A deciding run that saw the visible run's leftovers would pass.
REMEMBERS_THE_VISIBLE_RUN = """import os
from pathlib import Path

_MARKS = (Path.cwd() / ".seen-by-visible", Path(os.environ["HOME"]) / ".seen-by-visible")
if any(mark.exists() for mark in _MARKS):
    def add(a, b):
        return a + b
else:
    for mark in _MARKS:
        mark.write_text("planted")

    def add(a, b):
        return a - b
"""


@pytest.mark.parametrize("kind", ["none", "bwrap"])
def test_what_the_visible_run_leaves_never_reaches_the_deciding_run(
    tmp_path: Path, kind: SandboxKind
) -> None:
    if kind == "bwrap":
        require_bwrap()
    task = add_task(visible_command="{python} -m pytest -q tests")
    verdict = run_grader(tmp_path, task, write("calc.py", REMEMBERS_THE_VISIBLE_RUN), kind)
    assert verdict.visible is not None and verdict.visible.passed == 0  # it planted its marks
    assert verdict.outcome == "fail", verdict
    assert verdict.hidden is not None and verdict.hidden.passed == 0
