"""``check --audit`` runs the self-test and the exploit library on one executor, each task's
exploits submitted once its self-test is done."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.audit.record import AUDIT_FILE
from harnessdrive.audit.runner import check_and_audit
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import write_suite
from tests.audit import weak_tasks
from tests.integration.test_one_executor import CountingPlugin, counting

__all__ = ["counting"]  # the fixture, used by name

pytestmark = pytest.mark.slow  # grades two tasks' cases and exploits


def test_one_executor_runs_both_and_each_tasks_exploits_follow_its_self_test(
    tmp_path: Path, counting: CountingPlugin
) -> None:
    sound, weak = weak_tasks.sound(), weak_tasks.type_only()
    folder = write_suite(tmp_path, [sound, weak])
    checks, audits = check_and_audit(
        load_suite(folder), logs=tmp_path / "logs", jobs=2, executor="counting"
    )
    (executor,) = counting.made
    keys = [job.key for job, _ in executor.jobs]
    for task in (sound.id, weak.id):
        cases = [n for n, key in enumerate(keys) if key.startswith(f"check:{task}:")]
        exploits = [n for n, key in enumerate(keys) if key.startswith(f"audit:{task}:")]
        assert cases and len(exploits) >= 9
        # Submitted once the task's self-test was over: its reference's outcomes are recorded.
        assert max(cases) < min(exploits)
        assert f"check:{task}:reference" in executor.results
    found = {item.task: item for item in audits}
    assert found[sound.id].trusted and not found[weak.id].trusted
    assert [item.task for item in checks] == [sound.id, weak.id]
    marked = json.loads((folder / "tasks" / weak.id / AUDIT_FILE).read_text())
    assert marked["trusted"] is False
