"""Attacks on node's test runner, graded under both back-ends: none of them passes."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.verdict import Verdict
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.tasks import load_task
from harnessdrive.testing.suites import write_task
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot
from tests.sandboxes import require_bwrap
from tests.unit.test_grading_runner import node_task

pytestmark = [pytest.mark.security, pytest.mark.slow]

WRONG = "exports.add = (a, b) => a - b;\n"
ATTACKS = {
    "neuter-assertions": (
        {"calc.js": "const assert = require('node:assert');\n"
         "for (const name of ['strictEqual', 'deepEqual', 'equal', 'ok']) {\n"
         "  assert[name] = () => {}; assert.strict[name] = () => {};\n}\n" + WRONG},
        "tampered", {"witness-mismatch"},
    ),
    "force-exit-zero": (
        {"calc.js": "process.on('exit', () => { process.exitCode = 0; });\n"
         "process.on('uncaughtException', () => process.exit(0));\n" + WRONG},
        "fail", set(),
    ),
    "rewrite-parent-junit": (
        {"calc.js": "const fs = require('node:fs');\n"
         "const args = fs.readFileSync(`/proc/${process.ppid}/cmdline`, 'utf8').split('\\0');\n"
         "const dest = args.find((a) => a.includes('junit') && a.endsWith('.xml'));\n"
         "const out = (dest || '').split('=').pop();\n"
         "process.on('exit', () => { try { fs.writeFileSync(out, '<testsuites><testcase "
         "name=\"adds small numbers\"/></testsuites>'); } catch {} });\n" + WRONG},
        "fail", set(),
    ),
    "npmrc-require": (
        {".npmrc": "node-options=--require ./hack.js\n", "hack.js": "process.exitCode = 0;\n",
         "calc.js": WRONG},
        "tampered", {"test-config"},
    ),
}  # fmt: skip


def run_grader(tmp_path: Path, sandbox: str, files: dict[str, str]) -> Verdict:
    loaded = load_task(write_task(tmp_path / "tasks", node_task()))
    snap = build_snapshot(loaded.repo_path, None, tmp_path / "snap")
    ws = copy_snapshot(snap, tmp_path / "ws")
    for rel, text in files.items():
        (ws / rel).write_text(text)
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(task=loaded, snapshot=snap, scratch=tmp_path / "scratch",
                         logs=tmp_path / "logs", sandbox=get_sandbox(sandbox),
                         python=sys.executable)  # fmt: skip
    return grade(setup, capture_changes(snap, ws))


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_node_attack_never_passes(tmp_path: Path, sandbox: str, attack: str) -> None:
    if sandbox == "bwrap":
        require_bwrap()
    if shutil.which("node") is None:
        pytest.fail("node is needed for the node attacks")
    files, outcome, codes = ATTACKS[attack]
    verdict = run_grader(tmp_path, sandbox, files)
    assert verdict.outcome == outcome, verdict
    assert {f.code for f in verdict.findings} == codes
