"""``check --audit`` on a suite with a task weak in each way the audit must catch, beside sound
tasks of the same kinds: each weak task is named with its exploit and fix, the sound ones come
out trusted, and the summary lists exactly the weak ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import write_suite
from tests.audit import weak_tasks

# Every exploit on eight tasks, and the self-test of each: minutes on a busy machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

WEAK = {
    "type-only": "exploit constant-stub got a pass; fix: the hidden tests accept a constant",
    "unprotected": "exploit rewrite-tests got a pass; fix: protect every test file and helper",
    "improve-in-process": "exploit objective-exit-json got the objective moved past its margin "
    "without improving anything; fix: measure through the objective runner",
    "diff-answers-in-repo": "exploit frozen-answers got a score of 50% where nothing earns more "
    "than 0%; fix: the hidden cases' answers are readable",
    "prompt-quotes": "exploit prompt-literal got a pass; fix: the prompt quotes the expected "
    "output",
}
SOUND = ("sound", "diff-sound", "improve-sound")


def test_check_audit_names_every_weak_task_with_its_exploit_and_trusts_the_sound_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    weak_tasks.differential(suite / "tasks", "diff-sound")
    weak_tasks.answers_in_repo(suite / "tasks")
    weak_tasks.improvement(suite, "improve-sound")
    weak_tasks.improvement(suite, "improve-in-process", in_process=True)
    tests_tasks = [
        weak_tasks.sound(),
        weak_tasks.type_only(),
        weak_tasks.unprotected(),
        weak_tasks.prompt_quotes(),
    ]
    write_suite(tmp_path, tests_tasks)
    assert run_cli(["check", str(suite), "--audit", "--jobs", "2"]) == 1
    out = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    for task, said in WEAK.items():
        assert f"{task}: {said}" in out
    order = [task.id for task in load_suite(suite).tasks]
    assert sorted(order) == sorted([*WEAK, *SOUND])
    listed = ", ".join(task for task in order if task in WEAK)
    assert f"{len(WEAK)} of {len(order)} tasks untrusted: {listed}" in out
    for task in SOUND:
        record = json.loads((suite / "tasks" / task / "audit.json").read_text())
        assert record["trusted"] is True, (task, record)
        assert record["exploits"] and not any(e["succeeded"] for e in record["exploits"])
    for task in WEAK:
        record = json.loads((suite / "tasks" / task / "audit.json").read_text())
        assert record["trusted"] is False
