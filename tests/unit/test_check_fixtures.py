"""The ``[[check.fixtures]]`` format, and how a graded fixture is held to what it declares."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from harnessdrive.checking.fixtures import FixtureAgent, disagreements
from harnessdrive.errors import TaskFormatError
from harnessdrive.grading.verdict import Finding, GradingRun, Verdict
from harnessdrive.harnesses.base import AgentRequest, AgentRun
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.store.results import DiffStats
from harnessdrive.tasks import Task, load_task
from harnessdrive.tasks.check_models import CheckSpec, FixtureSpec
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.suites import write_task
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import Snapshot, build_snapshot
from tests.conftest import ADD_FIXED, add_task


def fixture(**values: object) -> FixtureSpec:
    return FixtureSpec.model_validate({"patch": "selftest/x.patch", "expect": "fail", **values})


def test_a_fixture_needs_exactly_one_of_patch_and_overlay() -> None:
    with pytest.raises(ValidationError, match="exactly one of 'patch' and 'overlay'"):
        FixtureSpec.model_validate({"expect": "pass"})
    with pytest.raises(ValidationError, match="exactly one of 'patch' and 'overlay'"):
        FixtureSpec.model_validate({"patch": "a.patch", "overlay": "b", "expect": "pass"})


def test_unknown_keys_and_outcomes_are_errors() -> None:
    with pytest.raises(ValidationError, match="extra"):
        fixture(expected="fail")
    with pytest.raises(ValidationError):
        fixture(expect="crashed")


def test_a_fixture_is_named_after_its_file_unless_it_says() -> None:
    assert fixture().label == "x"
    assert FixtureSpec(overlay="selftest/rewritten/", expect="pass").label == "rewritten"
    assert fixture(name="wrong-tie-break").label == "wrong-tie-break"


def test_two_fixtures_with_one_name_are_an_error() -> None:
    with pytest.raises(ValidationError, match="used twice: x"):
        CheckSpec.model_validate(
            {"fixtures": [{"patch": "a/x.patch", "expect": "fail"}, {"patch": "b/x.patch",
                                                                       "expect": "pass"}]}
        )  # fmt: skip


def write_with_fixtures(tmp_path: Path, fixtures: list[dict[str, object]], **task: object) -> Path:
    folder = write_task(tmp_path, add_task(extra={"check": {"fixtures": fixtures}}, **task))
    (folder / "selftest" / "rewritten").mkdir(parents=True)
    (folder / "selftest" / "naive.patch").write_text("")
    return folder


def test_fixtures_load_with_their_files_resolved(tmp_path: Path) -> None:
    folder = write_with_fixtures(
        tmp_path,
        [
            {"patch": "selftest/naive.patch", "expect": "fail"},
            {"overlay": "selftest/rewritten", "expect": "pass"},
        ],
    )
    task = load_task(folder)
    assert [f.name for f in task.fixtures] == ["naive", "rewritten"]
    assert task.fixtures[0].change.patch == folder / "selftest" / "naive.patch"
    assert task.fixtures[1].change.overlay == folder / "selftest" / "rewritten"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"patch": "selftest/missing.patch", "expect": "fail"}, "patch file not found"),
        ({"overlay": "selftest/missing", "expect": "pass"}, "overlay folder not found"),
        ({"overlay": "selftest/naive.patch", "expect": "pass"}, "overlay folder not found"),
        (
            {"patch": "selftest/naive.patch", "expect": "fail", "visible": "pass"},
            "no visible_command",
        ),
    ],
)
def test_bad_fixtures_are_task_format_errors(
    tmp_path: Path, entry: dict[str, object], message: str
) -> None:
    with pytest.raises(TaskFormatError, match=message):
        load_task(write_with_fixtures(tmp_path, [entry]))


def changes(files: int, lines_each: int) -> DiffStats:
    return DiffStats(files_changed=files, lines_added=files * lines_each)


def run(succeeded: bool) -> GradingRun:
    return GradingRun(
        command="t",
        exit_code=0 if succeeded else 1,
        timed_out=False,
        seconds=1.0,
        passed=1 if succeeded else 0,
        total=1,
        failed=0 if succeeded else 1,
        source="junit",
    )


def test_a_fixture_that_gets_what_it_declares_agrees() -> None:
    spec = fixture(visible="pass", min_files=1, max_files=2, min_lines=3, max_lines=10)
    verdict = Verdict(outcome="fail", visible=run(True), hidden=run(False))
    assert disagreements(spec, verdict, changes(2, 4), reference_lines=None) == []


def test_each_way_of_disagreeing_is_named() -> None:
    spec = fixture(
        visible="pass", findings=["protected-path"], max_files=1, min_lines=50,
        more_lines_than_reference=True,
    )  # fmt: skip
    verdict = Verdict(outcome="pass", visible=run(False), hidden=run(True))
    found = disagreements(spec, verdict, changes(2, 4), reference_lines=20)
    assert found == [
        "should be fail but got pass",
        "visible tests should pass but got fail",
        "should have the finding(s) protected-path",
        "changes 2 files, more than the declared maximum 1",
        "changes 8 lines, fewer than the declared minimum 50",
        "changes 8 lines, not more than the reference's 20",
    ]


def test_a_declared_finding_must_be_present() -> None:
    spec = fixture(expect="tampered", findings=["test-config"])
    hook = Verdict(outcome="tampered", findings=(Finding(code="test-runner-hook"),))
    assert disagreements(spec, hook, changes(1, 1), None) == [
        "should have the finding(s) test-config"
    ]
    config = Verdict(outcome="tampered", findings=(Finding(code="test-config"),))
    assert disagreements(spec, config, changes(1, 1), None) == []


def test_more_lines_than_reference_needs_a_reference() -> None:
    spec = fixture(expect="pass", more_lines_than_reference=True)
    verdict = Verdict(outcome="pass", hidden=run(True))
    assert disagreements(spec, verdict, changes(1, 30), None) == [
        "no reference solution's diff to compare with"
    ]
    assert disagreements(spec, verdict, changes(1, 30), 29) == []


def make_fixture_change(task: Task, snapshot: Snapshot, scratch: Path) -> tuple[AgentRun, Path]:
    """The fixture agent's run in a fresh copy of the base state, as a trial gives it one."""
    workspace = copy_snapshot(snapshot, scratch / "workspace")
    for name in ("home", "tmp", "logs"):
        (scratch / name).mkdir()
    request = AgentRequest(
        task=task,
        variant=VariantSpec(harness="fixture"),
        prompt=task.prompt,
        prompt_file=scratch / "prompt.md",
        workspace=workspace,
        home=scratch / "home",
        tmp=scratch / "tmp",
        logs=scratch / "logs",
        timeout=60,
        sandbox=get_sandbox("none"),
        network="none",
        python="python3",
    )
    return FixtureAgent(task.fixtures[0]).run(request), workspace


def test_a_patch_that_does_not_apply_is_reported_not_raised(tmp_path: Path) -> None:
    folder = write_with_fixtures(tmp_path, [{"patch": "selftest/naive.patch", "expect": "fail"}])
    (folder / "selftest" / "naive.patch").write_text(
        "--- a/nowhere.py\n+++ b/nowhere.py\n@@ -1 +1 @@\n-old\n+new\n"
    )
    task = load_task(folder)
    snapshot = build_snapshot(task.repo_path, None, tmp_path / "snap")
    run, workspace = make_fixture_change(task, snapshot, tmp_path / "scratch")
    assert run.exit_code != 0 and not capture_changes(snapshot, workspace)
    assert run.error is not None and run.error.startswith("cannot apply naive: ")


def test_an_overlay_fixture_is_captured_as_a_change(tmp_path: Path) -> None:
    folder = write_with_fixtures(tmp_path, [{"overlay": "selftest/rewritten", "expect": "pass"}])
    (folder / "selftest" / "rewritten" / "calc.py").write_text(ADD_FIXED)
    task = load_task(folder)
    snapshot = build_snapshot(task.repo_path, None, tmp_path / "snap")
    run, workspace = make_fixture_change(task, snapshot, tmp_path / "scratch")
    assert run.exit_code == 0 and run.error is None
    assert capture_changes(snapshot, workspace).paths == ("calc.py",)
