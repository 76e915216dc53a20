"""Results folders from before runs recorded each task's trust still load, report and compare:
their tasks are counted and said to be not audited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from tests.integration.test_old_results import SCHEMAS, copy_fixture, folder_files


@pytest.mark.parametrize("schema", SCHEMAS)
def test_an_old_folder_counts_its_tasks_as_not_audited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schema: str
) -> None:
    results = copy_fixture(schema, tmp_path / "results")
    before = folder_files(results)
    capsys.readouterr()
    assert run_cli(["report", "--results", str(results), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    tasks = sorted(row["task"] for row in shown["tasks"])
    assert shown["trust"]["left_out"] == []
    assert shown["trust"]["not_audited"] == shown["trust"]["unrecorded"] == tasks
    assert run_cli(["report", "--results", str(results), "--all-tasks"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert (
        f"{len(tasks)} tasks not audited, counted; {len(tasks)} recorded before runs recorded "
        f"audits: {', '.join(tasks)}"
    ) in text
    assert run_cli(["compare", "reference", "tamperer", "--results", str(results), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    paired = {row["task"] for row in found["tasks"]}
    assert paired and paired <= set(found["trust"]["not_audited"])
    assert found["trust"]["left_out"] == []
    assert folder_files(results) == before
