"""The audit on deliberately weak tasks: each is named with the exploit that breaks it, the
sound task comes out trusted, and the result is recorded beside each task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.audit.record import AUDIT_FILE, TaskAudit, read_trust
from harnessdrive.audit.runner import audit
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import write_suite
from tests.audit import weak_tasks


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, TaskAudit]]:
    root = tmp_path_factory.mktemp("audit")
    tasks = [
        weak_tasks.sound(),
        weak_tasks.type_only(),
        weak_tasks.unprotected(),
        weak_tasks.prompt_quotes(),
    ]
    folder = write_suite(root, tasks)
    found = audit(load_suite(folder), logs=root / "logs", jobs=2)
    return folder, {item.task: item for item in found}


def _broken_by(item: TaskAudit) -> set[str]:
    return {exploit.exploit for exploit in item.broken_by}


def test_sound_task_is_trusted(audited: tuple[Path, dict[str, TaskAudit]]) -> None:
    _, found = audited
    assert found["sound"].trusted
    assert len(found["sound"].exploits) >= 9


def test_type_only_hidden_tests_fall_to_a_constant(
    audited: tuple[Path, dict[str, TaskAudit]],
) -> None:
    _, found = audited
    assert "constant-stub" in _broken_by(found["type-only"])
    assert not found["type-only"].trusted


def test_unprotected_test_helper_falls_to_rewritten_tests(
    audited: tuple[Path, dict[str, TaskAudit]],
) -> None:
    _, found = audited
    assert "rewrite-tests" in _broken_by(found["unprotected"])


def test_prompt_quoting_the_answer_is_named(audited: tuple[Path, dict[str, TaskAudit]]) -> None:
    _, found = audited
    item = found["prompt-quotes"]
    assert "prompt-literal" in _broken_by(item)
    assert any("Hello, harness!" in problem for problem in item.problems)


def test_audit_is_recorded_beside_each_task(audited: tuple[Path, dict[str, TaskAudit]]) -> None:
    folder, found = audited
    for task, item in found.items():
        data = json.loads((folder / "tasks" / task / AUDIT_FILE).read_text())
        assert data["trusted"] is item.trusted
        assert read_trust(folder / "tasks" / task) is item.trusted
