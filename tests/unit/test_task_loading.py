from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.errors import TaskFormatError, UserError
from harnessdrive.tasks import load_suite, load_task
from harnessdrive.testing.suites import TaskFiles, write_suite, write_task
from tests.conftest import add_task


def test_suite_loads_tasks_hidden_files_and_solution(tmp_path: Path) -> None:
    folder = write_suite(tmp_path, [add_task("a"), add_task("b")], variants=["reference"])
    suite = load_suite(folder)
    assert [t.id for t in suite.tasks] == ["a", "b"]
    assert [v.harness for v in suite.default_variants] == ["reference"]
    task = suite.tasks[0]
    assert [h.target for h in task.hidden] == ["tests/test_hidden.py"]
    assert task.solution is not None and task.solution.overlay is not None
    assert task.repo_path == (folder / "tasks" / "a" / "repo").resolve()


def test_a_single_task_folder_is_a_suite_of_one(tmp_path: Path) -> None:
    folder = write_task(tmp_path, add_task("solo"))
    suite = load_suite(folder)
    assert suite.name == "solo" and [t.id for t in suite.tasks] == ["solo"]


def test_unknown_key_is_an_error_naming_the_key(tmp_path: Path) -> None:
    folder = write_task(tmp_path, add_task(extra={"grade": {"comand": "typo"}}))
    with pytest.raises(TaskFormatError, match=r"unknown key 'grade\.comand'"):
        load_task(folder)


def test_prompt_from_file_and_exactly_one_prompt(tmp_path: Path) -> None:
    folder = write_task(tmp_path, add_task(extra={"prompt_file": "PROMPT.md"}))
    with pytest.raises(TaskFormatError, match="exactly one of 'prompt' and 'prompt_file'"):
        load_task(folder)
    text = (folder / "task.toml").read_text().replace('prompt = "Make the tests pass."\n', "")
    (folder / "task.toml").write_text(text)
    (folder / "PROMPT.md").write_text("Fix add.\n")
    assert load_task(folder).prompt == "Fix add.\n"


def test_missing_repo_path_and_hidden_file_are_user_errors(tmp_path: Path) -> None:
    folder = write_task(tmp_path, add_task(extra={"repo": {"path": "nowhere"}}))
    with pytest.raises(UserError, match="repo path does not exist"):
        load_task(folder)
    other = write_task(
        tmp_path,
        add_task("h", extra={"grade": {"hidden": [{"source": "gone.py", "target": "t.py"}]}}),
    )
    with pytest.raises(TaskFormatError, match=r"hidden file not found: gone\.py"):
        load_task(other)


def test_hidden_target_must_stay_inside_the_repository(tmp_path: Path) -> None:
    hidden = [{"source": "hidden/tests/test_hidden.py", "target": "../escape.py"}]
    folder = write_task(tmp_path, add_task(extra={"grade": {"hidden": hidden}}))
    with pytest.raises(TaskFormatError, match="relative path inside the repository"):
        load_task(folder)


def test_duplicate_task_ids_are_refused(tmp_path: Path) -> None:
    folder = write_suite(tmp_path, [add_task("a"), add_task("b")])
    text = (folder / "tasks" / "b" / "task.toml").read_text().replace('id = "b"', 'id = "a"')
    (folder / "tasks" / "b" / "task.toml").write_text(text)
    with pytest.raises(TaskFormatError, match="task id 'a' is used twice"):
        load_suite(folder)


def test_fingerprint_changes_when_a_hidden_file_changes(tmp_path: Path) -> None:
    folder = write_task(tmp_path, add_task())
    before = load_task(folder).fingerprint
    (folder / "hidden" / "tests" / "test_hidden.py").write_text("def test_x():\n    pass\n")
    assert load_task(folder).fingerprint != before


def test_schema_command_publishes_task_and_suite_schemas(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_cli(["schema", "task"]) == 0
    task_schema = json.loads(capsys.readouterr().out)
    assert task_schema["additionalProperties"] is False
    assert {"id", "repo", "grade"} <= set(task_schema["required"])
    assert run_cli(["schema", "suite"]) == 0
    assert "variants" in json.loads(capsys.readouterr().out)["properties"]
    assert run_cli(["schema", "nonsense"]) == 2


def test_a_task_without_hidden_files_or_solution(tmp_path: Path) -> None:
    folder = write_task(tmp_path, TaskFiles("plain", files={"a.py": "x = 1\n"}))
    task = load_task(folder)
    assert task.solution is None
    assert task.hidden == ()
