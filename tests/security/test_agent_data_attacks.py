"""Attacks through data the agent controls, on pytest, unittest and node tasks, under both
back-ends: a report its code rewrites to something no reader should choke on (a declared
encoding the parser cannot read, nesting, one giant token, a folder or a link in its place),
and settings files nested past any parser's stack. Each ends ``fail`` or ``tampered``: never a
pass, never "not graded", never an error of the machinery."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from harnessdrive.grading.grader import GradingSetup
from harnessdrive.grading.verdict import Verdict
from harnessdrive.protocols.round import graded
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.tasks import load_task
from harnessdrive.testing.suites import TaskFiles, write_task
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot
from tests.conftest import add_task
from tests.sandboxes import require_bwrap
from tests.unit.test_grading_runner import node_task, unittest_task

pytestmark = [pytest.mark.security, pytest.mark.slow]

PASSING = (
    '<testsuites><testsuite tests="2"><testcase classname="tests.test_hidden" name="test_more"/>'
    '<testcase classname="tests.test_hidden" name="test_negative"/></testsuite></testsuites>'
)
REPORTS = {
    "declared-encoding": f'<?xml version="1.0" encoding="shift_jis"?>{PASSING}',
    "utf-16-claim": f'<?xml version="1.0" encoding="utf-16"?>{PASSING}',
    "deep-nesting": "<testsuites>" + "<x>" * 20_000 + "</x>" * 20_000 + "</testsuites>",
    "giant-token": '<testsuites><testsuite name="' + "a" * (6 * 1024 * 1024) + '"/></testsuites>',
}
# The code under test rewrites the report at exit, after the runner wrote it.
REWRITE = """
import atexit, os, re

def add(a, b):
    return a - b

def _rewrite():
    found = re.search(r"--junitxml=(\\S+)", os.environ.get("PYTEST_ADDOPTS", ""))
    path = found.group(1) if found else os.environ.get("HARNESSDRIVE_JUNIT")
    if not path:
        return
    {how}

atexit.register(_rewrite)
"""
WRITE = "open(path, 'w', encoding='latin-1').write({text!r})"
REPLACE = {
    "folder-in-its-place": "os.remove(path); os.mkdir(path)",
    "link-in-its-place": "os.remove(path); os.symlink('/etc/passwd', path)",
}
DEEP_TOML = "[tool.pytest.ini_options]\naddopts = " + "[" * 100_000 + "\n"
DEEP_JSON = '{"scripts": {"test": ' + "[" * 100_000 + "}}\n"


def python_attacks() -> dict[str, tuple[dict[str, str], set[str]]]:
    attacks: dict[str, tuple[dict[str, str], set[str]]] = {
        name: ({"calc.py": REWRITE.format(how=WRITE.format(text=text))}, {"fail"})
        for name, text in REPORTS.items()
    }
    attacks |= {
        name: ({"calc.py": REWRITE.format(how=how)}, {"fail"}) for name, how in REPLACE.items()
    }
    wrong = "def add(a, b):\n    return a - b\n"
    attacks["deep-pyproject"] = ({"pyproject.toml": DEEP_TOML, "calc.py": wrong}, {"tampered"})
    return attacks


RUNNERS: dict[str, TaskFiles] = {"pytest": add_task(), "unittest": unittest_task()}
CASES = [(runner, name) for runner in RUNNERS for name in sorted(python_attacks())]
CASES += [("node", "deep-package-json")]


def grade_files(tmp_path: Path, task: TaskFiles, sandbox: str, files: dict[str, str]) -> Verdict:
    loaded = load_task(write_task(tmp_path / "tasks", task))
    snap = build_snapshot(loaded.repo_path, None, tmp_path / "snap")
    ws = copy_snapshot(snap, tmp_path / "ws")
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(
        task=loaded,
        snapshot=snap,
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        sandbox=get_sandbox(sandbox),
        python=sys.executable,
    )
    return graded(setup, capture_changes(snap, ws))


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
@pytest.mark.parametrize(("runner", "attack"), CASES)
def test_an_attack_through_agent_data_is_the_agents_outcome(
    tmp_path: Path, sandbox: str, runner: str, attack: str
) -> None:
    if sandbox == "bwrap":
        require_bwrap()
    if runner == "node":
        if shutil.which("node") is None:
            pytest.fail("node is needed for the node attacks")
        task = node_task()
        files, outcomes = {"package.json": DEEP_JSON}, {"tampered"}
    else:
        task = RUNNERS[runner]
        files, outcomes = python_attacks()[attack]
    verdict = grade_files(tmp_path, task, sandbox, files)
    assert verdict.outcome in outcomes, verdict
    assert verdict.error is None or "machinery" not in verdict.error
    # What the results folder keeps of a report stays small whatever was written.
    for kept in (tmp_path / "logs").glob("junit-*.xml"):
        assert kept.is_symlink() or kept.stat().st_size < 5 * 1024 * 1024
