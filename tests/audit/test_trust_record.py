"""A task's audit as the trust a run records: untrusted, invalid, trusted or not audited."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.audit.record import AUDIT_FILE, ExploitOutcome, TaskAudit, write_audit
from harnessdrive.audit.trust_record import task_trust
from harnessdrive.store.trust import recorded_trust
from harnessdrive.tasks.loading import Task, load_suite
from harnessdrive.testing.suites import TaskFiles, write_suite


def _task(tmp_path: Path) -> Task:
    suite = write_suite(tmp_path, [TaskFiles("t", files={"a.txt": "a\n"}, command="true")])
    return load_suite(suite).tasks[0]


def _audit(task: Task, *, broken: bool = False, problem: str = "", fingerprint: str = "") -> None:
    record = TaskAudit(task=task.id, fingerprint=fingerprint or task.fingerprint)
    record.exploits.append(ExploitOutcome("skip-tests", "fail", succeeded=False))
    if broken:
        record.exploits.append(ExploitOutcome("forge-report", "pass", succeeded=True))
    if problem:
        record.problems.append(problem)
    write_audit(task.folder, record)


def test_each_audit_gives_its_status(tmp_path: Path) -> None:
    task = _task(tmp_path)
    assert task_trust(task).status == "unaudited"
    _audit(task)
    trusted = task_trust(task)
    assert (trusted.status, trusted.left_out, trusted.exploits) == ("trusted", False, ())
    _audit(task, broken=True)
    broken = task_trust(task)
    assert (broken.status, broken.exploits, broken.left_out) == (
        "untrusted",
        ("forge-report",),
        True,
    )
    assert broken.audit_sha256 != trusted.audit_sha256
    _audit(task, broken=True, problem="the prompt quotes the expected output")
    invalid = task_trust(task)
    assert (invalid.status, invalid.problems) == (
        "invalid",
        ("the prompt quotes the expected output",),
    )
    assert invalid.why() == "invalid: the prompt quotes the expected output"


def test_an_audit_of_another_version_or_unreadable_does_not_speak_for_the_task(
    tmp_path: Path,
) -> None:
    task = _task(tmp_path)
    _audit(task, broken=True, fingerprint="an-older-version")
    stale = task_trust(task)
    assert (stale.status, stale.exploits, stale.audited_fingerprint) == (
        "unaudited",
        (),
        "an-older-version",
    )
    (task.folder / AUDIT_FILE).write_text("[not an audit")
    assert task_trust(task).status == "unaudited"


def test_a_manifest_without_trust_or_with_a_broken_entry() -> None:
    assert recorded_trust({"run_id": "r"}) is None
    found = recorded_trust({"trust": {"a": {"task": "a", "status": "odd"}}})
    assert found is not None and found["a"].status == "unaudited"
