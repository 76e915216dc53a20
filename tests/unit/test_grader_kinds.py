"""[grade] as a tagged union of registered grader kinds, and the grading pipeline around them."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
import tomli_w

from harnessdrive.cli.app import run_cli
from harnessdrive.errors import GradingError, PluginError, TaskFormatError
from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.kinds.base import GradingCopy, grader_kinds
from harnessdrive.grading.kinds.tests import TestsGradeSpec
from harnessdrive.grading.verdict import Verdict
from harnessdrive.plugins.hookspecs import hookimpl
from harnessdrive.plugins.manager import plugin_manager
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.tasks import load_task
from harnessdrive.tasks.models import GradeSpec
from harnessdrive.testing.suites import write_task
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot
from tests.conftest import add_task


class FilesGradeSpec(GradeSpec):
    """A kind of our own: the share of ``required`` files present in the grading copy."""

    kind: Literal["files"] = "files"
    required: tuple[str, ...]
    pass_at: float = 1.0
    probe: str | None = None


class FilesKind:
    name = "files"
    spec_model = FilesGradeSpec

    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}
        self.plain_has_hidden: bool | None = None
        self.plain_has_change: bool | None = None

    def grade(self, copy: GradingCopy, spec: FilesGradeSpec) -> Verdict:
        with copy.fresh("plain") as plain:
            assert plain is not None and plain.hidden == {}
            self.plain_has_hidden = (plain.root / "tests/test_hidden.py").exists()
            self.plain_has_change = (plain.root / "new.py").exists()
        refused = pytest.raises(GradingError, match="cannot be called 'grading-home'")
        with refused, copy.fresh("grading-home"):
            pass
        present = [path for path in spec.required if (copy.root / path).is_file()]
        self.seen = {
            "files": sorted(p.relative_to(copy.root).as_posix() for p in copy.root.rglob("*.py")),
            "hidden": sorted(copy.hidden),
            "readonly": copy.isolation.readonly,
            "copy": copy.root,
        }
        score = len(present) / len(spec.required)
        metrics = {"present": float(len(present)), "required": float(len(spec.required))}
        if spec.probe is not None:
            run = copy.run("probe", spec.probe, timeout=spec.timeout)
            metrics["probe_exit"] = float(run.exit_code if run.exit_code is not None else -1)
        return Verdict(
            outcome="pass" if score >= spec.pass_at else "fail", score=score, metrics=metrics
        )


class WrongTable(GradeSpec):
    kind: Literal["other"] = "other"


class Misnamed:
    name = "misnamed"
    spec_model = WrongTable

    def grade(self, copy: GradingCopy, spec: WrongTable) -> Verdict:
        raise AssertionError("never graded")


class _Plugin:
    def __init__(self, *kinds: object) -> None:
        self.kinds = list(kinds)

    @hookimpl
    def harnessdrive_grader_kinds(self) -> list[object]:
        return self.kinds


@pytest.fixture
def files_kind() -> Iterator[FilesKind]:
    kind = FilesKind()
    plugin = _Plugin(kind)
    plugin_manager().register(plugin, name="test-files-kind")
    try:
        yield kind
    finally:
        plugin_manager().unregister(plugin)


def write_toml(folder: Path, grade: dict[str, Any], files: dict[str, str] | None = None) -> Path:
    (folder / "repo").mkdir(parents=True)
    for rel, text in (files or {"calc.py": "x = 1\n"}).items():
        (folder / "repo" / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / "repo" / rel).write_text(text)
    data = {"id": "t", "prompt": "p", "repo": {"path": "repo"}, "grade": grade}
    (folder / "task.toml").write_text(tomli_w.dumps(data))
    return folder


def test_a_grade_table_without_kind_is_the_tests_kind(tmp_path: Path) -> None:
    absent = load_task(write_toml(tmp_path / "a", {"command": "true"}))
    named = load_task(write_toml(tmp_path / "b", {"kind": "tests", "command": "true"}))
    for task in (absent, named):
        assert isinstance(task.spec.grade, TestsGradeSpec)
        assert task.spec.grade.kind == "tests"
        assert task.spec.grade.command == "true"
    assert absent.spec.model_dump()["grade"]["command"] == "true"


def test_an_unknown_kind_is_one_line_naming_the_file(tmp_path: Path) -> None:
    folder = write_toml(tmp_path / "t", {"kind": "test", "command": "true"})
    with pytest.raises(TaskFormatError) as caught:
        load_task(folder)
    message = str(caught.value)
    assert "\n" not in message
    assert str(folder / "task.toml") in message
    assert "unknown grader kind 'test'" in message and "did you mean 'tests'" in message


def test_an_unknown_key_of_a_kind_is_one_line_with_the_closest_key(tmp_path: Path) -> None:
    folder = write_toml(tmp_path / "t", {"comand": "true"})
    with pytest.raises(TaskFormatError) as caught:
        load_task(folder)
    message = str(caught.value)
    assert "\n" not in message and str(folder / "task.toml") in message
    assert "unknown key 'grade.comand' (did you mean 'command'?)" in message
    assert "missing key 'grade.command'" in message


def test_a_key_of_another_kind_is_refused(tmp_path: Path, files_kind: FilesKind) -> None:
    folder = write_toml(tmp_path / "t", {"kind": "files", "required": ["a"], "command": "x"})
    with pytest.raises(TaskFormatError, match=r"unknown key 'grade\.command'"):
        load_task(folder)


def test_the_cli_refuses_an_unknown_kind_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_toml(tmp_path / "t", {"kind": "nope", "command": "true"})
    assert run_cli(["check", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "unknown grader kind 'nope'" in err


def test_a_plugin_kind_grades_the_built_copy_through_the_pipeline(
    tmp_path: Path, files_kind: FilesKind
) -> None:
    probe = (
        "{python} -c \"import os, sys; sys.exit(int(os.environ['HOME'].startswith('{workspace}'))"
        " + 3 * os.path.isfile('tests/test_hidden.py'))\""
    )
    task_dir = write_toml(
        tmp_path / "t",
        {
            "kind": "files",
            "required": ["new.py", "tests/test_hidden.py", "gone.py"],
            "probe": probe,
        },
        {"calc.py": "x = 1\n", "tests/test_visible.py": "def test_v():\n    pass\n"},
    )
    (task_dir / "hidden" / "tests").mkdir(parents=True)
    (task_dir / "hidden" / "tests" / "test_hidden.py").write_text("def test_h():\n    pass\n")
    verdict = grade_edit(tmp_path, task_dir, {"new.py": "y = 2\n"})
    assert isinstance(load_task(task_dir).spec.grade, FilesGradeSpec)
    assert verdict.outcome == "fail"
    assert verdict.score == pytest.approx(2 / 3)
    # The probe ran in the copy (it found the hidden file there), with a HOME outside it.
    assert verdict.metrics == {"present": 2, "required": 3, "probe_exit": 3}
    assert (tmp_path / "logs" / "grade-probe.log").is_file()
    assert verdict.grader is not None
    assert verdict.grader.kind == "files"
    assert verdict.grader.args == {
        "required": ["new.py", "tests/test_hidden.py", "gone.py"],
        "pass_at": 1.0,
        "probe": probe,
    }
    # The copy step ran first: the change carried in, the hidden file injected and read-only.
    assert files_kind.seen["files"] == [
        "calc.py",
        "new.py",
        "tests/test_hidden.py",
        "tests/test_visible.py",
    ]
    assert files_kind.seen["hidden"] == ["tests/test_hidden.py"]
    # A further copy holds the change but never the hidden files.
    assert (files_kind.plain_has_change, files_kind.plain_has_hidden) == (True, False)
    assert files_kind.seen["copy"] / "tests/test_hidden.py" in files_kind.seen["readonly"]
    assert not files_kind.seen["copy"].exists()  # removed after grading


def test_a_tampering_change_is_tampered_whatever_the_kind_says(
    tmp_path: Path, files_kind: FilesKind
) -> None:
    task_dir = write_toml(tmp_path / "t", {"kind": "files", "required": ["calc.py"]})
    verdict = grade_edit(tmp_path, task_dir, {"sitecustomize.py": "import os\n"})
    assert verdict.score == 1.0
    assert verdict.outcome == "tampered"
    assert "interpreter-hook" in {finding.code for finding in verdict.findings}


def test_the_tests_kind_records_itself_and_its_arguments(tmp_path: Path) -> None:
    task = add_task(visible_command="{python} -m pytest -q tests")
    task_dir = write_task(tmp_path / "tasks", task)
    verdict = grade_edit(tmp_path, task_dir, {})
    assert verdict.outcome == "fail"
    assert verdict.grader is not None and verdict.grader.kind == "tests"
    assert verdict.grader.args == {
        "command": task.command,
        "visible_command": "{python} -m pytest -q tests",
        "junit": True,
    }
    assert (verdict.score, verdict.metrics) == (None, {})


def test_a_score_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="less than or equal to 1"):
        Verdict(outcome="pass", score=1.5)


def test_a_kind_whose_table_names_another_kind_is_refused() -> None:
    plugin = _Plugin(Misnamed())
    plugin_manager().register(plugin, name="test-misnamed")
    try:
        with pytest.raises(PluginError, match="'kind' must default to 'misnamed'"):
            grader_kinds()
    finally:
        plugin_manager().unregister(plugin)


def test_the_task_schema_is_a_union_of_every_registered_kind(
    files_kind: FilesKind, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["schema", "task"]) == 0
    schema = json.loads(capsys.readouterr().out)
    grade_schema = schema["properties"]["grade"]
    assert grade_schema["discriminator"]["propertyName"] == "kind"
    assert grade_schema["discriminator"]["mapping"] == {
        "tests": "#/$defs/TestsGradeSpec",
        "improve": "#/$defs/ImproveGradeSpec",
        "differential": "#/$defs/DifferentialGradeSpec",
        "harbor": "#/$defs/HarborGradeSpec",
        "files": "#/$defs/FilesGradeSpec",
    }
    files = schema["$defs"]["FilesGradeSpec"]
    assert files["properties"]["kind"]["const"] == "files"
    assert files["additionalProperties"] is False
    assert {"required", "pass_at", "hidden", "protected"} <= set(files["properties"])
    assert "command" in schema["$defs"]["TestsGradeSpec"]["required"]


def grade_edit(tmp_path: Path, task_dir: Path, files: dict[str, str]) -> Verdict:
    task = load_task(task_dir)
    snapshot = build_snapshot(task.repo_path, None, tmp_path / "snap")
    workspace = copy_snapshot(snapshot, tmp_path / "ws")
    for rel, text in files.items():
        (workspace / rel).write_text(text)
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(
        task=task,
        snapshot=snapshot,
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        sandbox=get_sandbox("none"),
        python=sys.executable,
    )
    return grade(setup, capture_changes(snapshot, workspace))
