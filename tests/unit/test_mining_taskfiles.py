"""A mined task's file written again with another test time limit changes that limit alone."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harnessdrive.mining.history import scan_history
from harnessdrive.mining.taskfiles import TaskSettings, retime_task_file, write_task_folder
from harnessdrive.tasks.loading import TASK_FILE, load_task
from tests.integration.test_mine_cli import small_history

SETTINGS = TaskSettings(
    test_command="python -m pytest -q\ntimeout = 5",  # a line that looks like the limit
    setup_command=None,
    test_timeout=600,
)


def test_retiming_a_task_file_matches_writing_it_with_the_new_limit(tmp_path: Path) -> None:
    small_history(tmp_path / "repo").close()
    (candidate,) = scan_history(tmp_path / "repo", "2000-01-01").candidates
    for settings in (SETTINGS, dataclasses.replace(SETTINGS, test_command="pytest -q")):
        first, fresh = tmp_path / "first", tmp_path / "fresh"
        write_task_folder(first, tmp_path / "repo", candidate, settings)
        assert retime_task_file(first, 42.5)
        write_task_folder(
            fresh, tmp_path / "repo", candidate, dataclasses.replace(settings, test_timeout=42.5)
        )
        assert (first / TASK_FILE).read_text() == (fresh / TASK_FILE).read_text()
        assert load_task(first).spec.grade.timeout == 42.5  # type: ignore[union-attr]
        for folder in (first, fresh):
            for path in sorted(folder.rglob("*"), reverse=True):
                path.unlink() if path.is_file() else path.rmdir()
            folder.rmdir()


def test_a_task_file_not_as_written_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / TASK_FILE).write_text('id = "x"\n[grade]\ncommand = "true"\n')
    assert not retime_task_file(tmp_path, 30)
    assert (tmp_path / TASK_FILE).read_text() == 'id = "x"\n[grade]\ncommand = "true"\n'
    assert not retime_task_file(tmp_path / "missing", 30)
