"""The bundled demo suite keeps its promises, proven with plain git, subprocess and pytest.

Each task of ``harnessdrive/demo/suite`` is graded here the way the engine will grade it: a
fresh git copy of the shared project, a patch applied with ``git apply``, the hidden files
copied to their targets, and the task's commands run with this interpreter as ``{python}``.
A command passes when it exits 0 and its junit report holds tests that all passed.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import harnessdrive

SUITE = Path(harnessdrive.__file__).parent / "demo" / "suite"
PROJECT = SUITE / "project"
ALL_TASK_FOLDERS = sorted(path.parent for path in SUITE.glob("tasks/*/task.toml"))
# The improvement task has a project and rounds of its own (tests/integration/test_improve.py).
IMPROVE_TASK = SUITE / "tasks" / "fewer-comparisons"
# The differential task (skiplist) has no test command; tests/integration/test_differential.py
# proves its promises.
DIFFERENTIAL_TASK = SUITE / "tasks" / "skiplist"
TASK_FOLDERS = [f for f in ALL_TASK_FOLDERS if f not in (IMPROVE_TASK, DIFFERENTIAL_TASK)]
TASK_IDS = [folder.name for folder in TASK_FOLDERS]

# Whether the task's visible tests already pass on the untouched project. A bug fix must
# reproduce its bug in the visible tests; a feature's area is healthy until hidden tests arrive.
VISIBLE_PASSES_AT_BASE = {
    "amount-parsing": False,
    "bad-row-errors": False,
    "top-products": False,
    "weekly-totals": True,
}

TASK_KEYS = {"id", "title", "prompt", "repo", "setup", "grade", "limits", "check"}
TABLE_KEYS = {
    "repo": {"path"},
    "setup": {"commands"},
    "grade": {"command", "visible_command", "hidden", "protected", "timeout", "scope"},
    "limits": {"agent_timeout"},
}

# Our own git calls ignore the user's and the system's git configuration.
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


@dataclass(frozen=True)
class Task:
    """One task folder and its parsed task.toml."""

    folder: Path
    config: dict[str, Any]

    @property
    def command(self) -> str:
        return str(self.config["grade"]["command"])

    @property
    def visible_command(self) -> str:
        return str(self.config["grade"]["visible_command"])

    @property
    def hidden(self) -> list[dict[str, str]]:
        return list(self.config["grade"]["hidden"])

    @property
    def project(self) -> Path:
        return (self.folder / self.config["repo"]["path"]).resolve()


def load_task(task_id: str) -> Task:
    folder = SUITE / "tasks" / task_id
    return Task(folder, tomllib.loads((folder / "task.toml").read_text(encoding="utf-8")))


@dataclass(frozen=True)
class GradeRun:
    """What one grade command did: its exit code and the tests its junit report lists."""

    returncode: int
    passed: list[str]
    failed: list[str]
    output: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and bool(self.passed) and not self.failed


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"git {' '.join(args)} failed:\n{done.stderr}"
    return done.stdout


def junit_results(report: Path) -> tuple[list[str], list[str]]:
    """Names of the passing and the not-passing test cases in a pytest junit report."""
    passed: list[str] = []
    failed: list[str] = []
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        outcomes = {child.tag for child in case}
        (failed if outcomes & {"failure", "error", "skipped"} else passed).append(name)
    return passed, failed


class Workspace:
    """A fresh git copy of a task's project, graded the way the engine grades it."""

    def __init__(self, task: Task, root: Path) -> None:
        self.task = task
        self.root = root / "project"
        self.reports = root / "reports"
        self.reports.mkdir()
        shutil.copytree(
            task.project, self.root, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
        )
        git(self.root, "init", "-q")
        git(self.root, "add", "-A")
        git(
            self.root,
            "-c",
            "user.name=demo",
            "-c",
            "user.email=demo@example.invalid",
            "commit",
            "-q",
            "-m",
            "base",
        )

    def apply(self, patch: Path) -> None:
        git(self.root, "apply", str(patch))

    def touched_files(self, patch: Path) -> list[str]:
        numstat = git(self.root, "apply", "--numstat", str(patch))
        return [line.split("\t")[2] for line in numstat.splitlines()]

    def inject_hidden(self) -> None:
        for entry in self.task.hidden:
            target = self.root / entry["target"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.task.folder / entry["source"], target)

    def run(self, command: str) -> GradeRun:
        report = self.reports / f"junit-{len(list(self.reports.iterdir()))}.xml"
        argv = [sys.executable if word == "{python}" else word for word in shlex.split(command)]
        # Leave out settings of the pytest running this file; they are no part of the task.
        env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        # The demo uses plain pytest; plugins installed for our own tests only slow it down.
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        done = subprocess.run(
            [*argv, f"--junitxml={report}"],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=int(self.task.config["grade"]["timeout"]),
            check=False,
        )
        passed, failed = junit_results(report) if report.exists() else ([], [])
        return GradeRun(done.returncode, passed, failed, done.stdout + done.stderr)


def break_first_function(path: Path) -> bool:
    """Make the first function in ``path`` begin with ``return None``, as the breaker agent does.

    Returns False when the file defines no function.
    """
    source = path.read_text(encoding="utf-8")
    functions = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    if not functions:
        return False
    first_statement = min(functions, key=lambda node: node.lineno).body[0]
    lines = source.splitlines(keepends=True)
    lines.insert(first_statement.lineno - 1, " " * first_statement.col_offset + "return None\n")
    broken = "".join(lines)
    ast.parse(broken)  # still valid Python: the grade must fail on behaviour, not on syntax
    path.write_text(broken, encoding="utf-8")
    return True


def test_suite_file_lists_every_task_folder_and_the_built_in_variants():
    suite = tomllib.loads((SUITE / "suite.toml").read_text(encoding="utf-8"))
    assert set(suite) == {"name", "description", "tasks", "variants"}
    assert suite["name"] == "demo"
    assert suite["description"] and "\n" not in suite["description"]
    assert suite["variants"] == ["reference", "noop", "breaker", "tamperer"]
    matched = {path for pattern in suite["tasks"] for path in SUITE.glob(pattern) if path.is_dir()}
    assert (
        matched == set(ALL_TASK_FOLDERS)
        and IMPROVE_TASK in matched
        and DIFFERENTIAL_TASK in matched
    )
    assert set(TASK_IDS) == set(VISIBLE_PASSES_AT_BASE)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_file_has_exactly_the_documented_keys(task_id):
    task = load_task(task_id)
    assert set(task.config) == TASK_KEYS
    for table, keys in TABLE_KEYS.items():
        assert set(task.config[table]) == keys, table
    assert task.config["id"] == task_id
    assert re.fullmatch(r"[a-z0-9-]+", task_id)
    assert task.config["title"] and task.config["prompt"].strip()
    assert task.project == PROJECT.resolve()
    assert task.config["setup"]["commands"] == []
    assert task.config["grade"]["protected"] == ["tests/**"]
    assert all(set(entry) == {"source", "target"} for entry in task.hidden)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_grade_commands_run_the_visible_tests_and_add_only_the_hidden_ones(task_id):
    task = load_task(task_id)
    visible = shlex.split(task.visible_command)
    full = shlex.split(task.command)
    assert visible[:4] == ["{python}", "-m", "pytest", "-q"]
    assert full == visible + [entry["target"] for entry in task.hidden]
    assert all((PROJECT / path).is_file() for path in visible[4:])


def test_tasks_grade_disjoint_test_files_so_one_open_bug_cannot_fail_another_task():
    files = [path for task_id in TASK_IDS for path in shlex.split(load_task(task_id).command)[4:]]
    assert len(files) == len(set(files))


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_hidden_files_live_under_tests_and_are_absent_from_the_project(task_id):
    task = load_task(task_id)
    assert task.hidden
    for entry in task.hidden:
        target = Path(entry["target"])
        assert target.parts[0] == "tests" and ".." not in target.parts
        assert any(fnmatch.fnmatch(entry["target"], p) for p in task.config["grade"]["protected"])
        assert not (PROJECT / target).exists()
        assert (task.folder / entry["source"]).is_file()


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_untouched_project_fails_the_grade(task_id, tmp_path):
    task = load_task(task_id)
    workspace = Workspace(task, tmp_path)
    visible = workspace.run(task.visible_command)
    workspace.inject_hidden()
    graded = workspace.run(task.command)
    assert visible.ok is VISIBLE_PASSES_AT_BASE[task_id], visible.output
    assert not graded.ok, graded.output


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_solution_passes_visible_and_hidden_tests(task_id, tmp_path):
    task = load_task(task_id)
    workspace = Workspace(task, tmp_path)
    workspace.apply(task.folder / "solution" / "solution.patch")
    visible = workspace.run(task.visible_command)
    workspace.inject_hidden()
    graded = workspace.run(task.command)
    assert visible.ok, visible.output
    assert graded.ok, graded.output
    assert any("test_spec_" in name for name in graded.passed)


@pytest.mark.parametrize("task_id", TASK_IDS)
@pytest.mark.parametrize("start", ["base", "solution"])
def test_confident_wrong_edit_fails_the_grade(task_id, start, tmp_path):
    """The breaker agent's edit: each .py file the solution touches returns None at once.

    From the base this is what the breaker agent does; on top of the reference solution it
    shows the grade exercises every function the edit breaks, not just the original bug.
    """
    task = load_task(task_id)
    workspace = Workspace(task, tmp_path)
    solution = task.folder / "solution" / "solution.patch"
    touched = workspace.touched_files(solution)
    if start == "solution":
        workspace.apply(solution)
    broken = [
        name
        for name in touched
        if name.endswith(".py") and break_first_function(workspace.root / name)
    ]
    workspace.inject_hidden()
    graded = workspace.run(task.command)
    assert broken, f"no function to break in {touched}"
    assert not graded.ok, graded.output


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_naive_fix_passes_the_visible_tests_but_not_the_hidden_spec(task_id, tmp_path):
    """Each task's naive fixture: every visible test accepts it, only hidden spec tests fail."""
    task = load_task(task_id)
    workspace = Workspace(task, tmp_path)
    workspace.apply(task.folder / "selftest" / "naive.patch")
    visible = workspace.run(task.visible_command)
    workspace.inject_hidden()
    graded = workspace.run(task.command)
    assert visible.ok, visible.output
    assert not graded.ok
    assert graded.failed and all(f"test_spec_{task_id}" in name for name in graded.failed)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_rewritten_fixture_passes_visible_and_hidden_tests(task_id, tmp_path):
    task = load_task(task_id)
    workspace = Workspace(task, tmp_path)
    overlay = task.folder / "selftest" / "rewritten"
    shutil.copytree(overlay, workspace.root, dirs_exist_ok=True)
    visible = workspace.run(task.visible_command)
    workspace.inject_hidden()
    graded = workspace.run(task.command)
    assert visible.ok, visible.output
    assert graded.ok, graded.output


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_every_task_declares_naive_tampered_and_rewritten_fixtures(task_id):
    task = load_task(task_id)
    fixtures = task.config["check"]["fixtures"]
    expected = {f.get("patch") or f.get("overlay"): f["expect"] for f in fixtures}
    assert expected["selftest/naive.patch"] == "fail"
    assert expected["selftest/tampered.patch"] == "tampered"
    assert expected["selftest/rewritten"] == "pass"
    for source in expected:
        assert (task.folder / source).exists(), source
    assert task.config["grade"]["scope"] == {"paths": ["tally/**"]}


def test_all_reference_solutions_together_pass_the_whole_project_and_every_hidden_test(tmp_path):
    tasks = [load_task(task_id) for task_id in TASK_IDS]
    workspace = Workspace(tasks[0], tmp_path)
    for task in tasks:
        workspace.apply(task.folder / "solution" / "solution.patch")
        for entry in task.hidden:
            shutil.copyfile(task.folder / entry["source"], workspace.root / entry["target"])
    graded = workspace.run("{python} -m pytest -q tests")
    assert graded.ok, graded.output
    hidden_modules = {Path(entry["target"]).stem for task in tasks for entry in task.hidden}
    assert hidden_modules <= {name.split("::")[0].split(".")[-1] for name in graded.passed}


def test_every_suite_file_is_one_the_wheel_carries():
    """The package-data glob ``demo/suite/**/*`` skips dotfiles; wheels hold no empty folders."""
    local_caches = {"__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache"}
    for folder, subfolders, files in os.walk(SUITE):
        subfolders[:] = [name for name in subfolders if name not in local_caches]
        relative = Path(folder).relative_to(SUITE)
        assert subfolders or files, f"empty folder {relative}"
        assert not [name for name in [*subfolders, *files] if name.startswith(".")], relative
