"""The audit on deliberately weak tasks: each is named with the exploit that breaks it, the
sound task comes out trusted, and the result is recorded beside each task."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.audit.exploits import Exploit, all_exploits
from harnessdrive.audit.record import AUDIT_FILE, TaskAudit, read_trust
from harnessdrive.audit.runner import audit
from harnessdrive.errors import PluginError
from harnessdrive.harnesses.base import AgentRequest
from harnessdrive.plugins.hookspecs import hookimpl
from harnessdrive.plugins.manager import plugin_manager
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


def _write_the_answer(request: AgentRequest) -> list[str]:
    (request.workspace / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    return ["calc.py"]


class _AnswerPlugin:
    def __init__(self, name: str) -> None:
        self.exploit = Exploit(
            name,
            ("tests",),
            "a plugin's exploit ran",
            "no fix: it solves the task",
            _write_the_answer,
        )

    @hookimpl
    def harnessdrive_exploits(self) -> list[Exploit]:
        return [self.exploit]


@pytest.fixture
def answer_plugin() -> Iterator[None]:
    plugin = _AnswerPlugin("write-the-answer")
    plugin_manager().register(plugin, name="test-answer-exploit")
    try:
        yield
    finally:
        plugin_manager().unregister(plugin)


def test_a_plugins_exploit_runs_beside_the_built_ins(answer_plugin: None, tmp_path: Path) -> None:
    folder = write_suite(tmp_path, [weak_tasks.sound()])
    (found,) = audit(load_suite(folder), logs=tmp_path / "logs", record=False)
    assert {e.exploit for e in found.exploits} >= {"write-the-answer", "constant-stub"}
    assert _broken_by(found) == {"write-the-answer"} and not found.trusted


def test_an_exploit_name_registered_twice_is_refused(answer_plugin: None) -> None:
    plugin = _AnswerPlugin("constant-stub")
    plugin_manager().register(plugin, name="test-duplicate-exploit")
    try:
        with pytest.raises(PluginError, match="'constant-stub' is registered twice"):
            all_exploits()
    finally:
        plugin_manager().unregister(plugin)
