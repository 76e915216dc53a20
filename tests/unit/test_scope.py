"""The scope check: a change outside ``[grade.scope]`` is reported, or tampers if the task says."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from rich.console import Console

from harnessdrive.errors import TaskFormatError
from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.scope import scope_findings
from harnessdrive.grading.verdict import Finding, Verdict
from harnessdrive.report.render import render_report
from harnessdrive.report.scoreboard import build_report
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.tasks import load_task
from harnessdrive.tasks.check_models import ScopeSpec
from harnessdrive.testing.suites import TaskFiles, write_task
from harnessdrive.workspace.changes import Changes, FileChange, capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot
from tests.conftest import ADD_FIXED, add_task
from tests.trial_results import trial_result


def changed(*paths: str) -> Changes:
    files = tuple(
        FileChange(
            path=path,
            kind="modified",
            old_mode="100644",
            new_mode="100644",
            new_blob="0" * 40,
            added_lines=1,
            deleted_lines=0,
            binary=False,
        )
        for path in paths
    )
    return Changes(base_tree="a", tree="b", files=files, patch=b"")


def test_only_paths_outside_the_scope_are_findings() -> None:
    scope = ScopeSpec(paths=("src/**", "setup.py"))
    found = scope_findings(changed("src/pkg/a.py", "setup.py", "README.md", "docs/x.md"), scope)
    assert [(f.code, f.path, f.severity) for f in found] == [
        ("out-of-scope", "README.md", "report"),
        ("out-of-scope", "docs/x.md", "report"),
    ]
    assert not any(f.tampers for f in found)


def test_tamper_mode_makes_the_findings_tampering() -> None:
    scope = ScopeSpec(paths=("src/**",), on_violation="tamper")
    (found,) = scope_findings(changed("src/a.py", "Makefile"), scope)
    assert found.path == "Makefile" and found.tampers


def test_protected_and_restored_paths_are_left_to_their_own_rules() -> None:
    scope = ScopeSpec(paths=("src/**",))
    found = scope_findings(
        changed("tests/test_a.py", "conftest.py", "notes.txt"),
        scope,
        exempt=("tests/**", "conftest.py"),
    )
    assert [f.path for f in found] == ["notes.txt"]


def test_no_scope_means_no_finding() -> None:
    assert scope_findings(changed("anything.py"), None) == []


def test_a_scope_needs_at_least_one_path(tmp_path: Path) -> None:
    folder = write_task(tmp_path, add_task(extra={"grade": {"scope": {"paths": []}}}))
    with pytest.raises(TaskFormatError, match=r"scope\.paths"):
        load_task(folder)


def test_findings_stored_before_severity_existed_still_tamper() -> None:
    old = Verdict.model_validate_json(
        '{"outcome": "tampered", "findings": [{"code": "protected-path", "path": "tests/x.py"}]}'
    )
    assert old.findings[0].severity == "tamper" and old.findings[0].tampers


def grade_edit(tmp_path: Path, task: TaskFiles, files: dict[str, str]) -> Verdict:
    loaded = load_task(write_task(tmp_path / "tasks", task))
    snapshot = build_snapshot(loaded.repo_path, None, tmp_path / "snap")
    workspace = copy_snapshot(snapshot, tmp_path / "ws")
    for rel, text in files.items():
        (workspace / rel).write_text(text)
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(
        task=loaded,
        snapshot=snapshot,
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        sandbox=get_sandbox("none"),
        python=sys.executable,
    )
    return grade(setup, capture_changes(snapshot, workspace))


STRAY = {"calc.py": ADD_FIXED, "NOTES.md": "scratch notes\n"}


def test_a_change_outside_the_scope_is_reported_and_the_tests_still_decide(
    tmp_path: Path,
) -> None:
    task = add_task(extra={"grade": {"scope": {"paths": ["calc.py"]}}})
    verdict = grade_edit(tmp_path, task, STRAY)
    assert verdict.outcome == "pass"
    assert [(f.code, f.path, f.severity) for f in verdict.findings] == [
        ("out-of-scope", "NOTES.md", "report")
    ]
    failing = grade_edit(tmp_path / "again", task, {"NOTES.md": "only notes\n"})
    assert failing.outcome == "fail" and [f.code for f in failing.findings] == ["out-of-scope"]


def test_with_tamper_mode_a_change_outside_the_scope_is_tampered(tmp_path: Path) -> None:
    scope = {"paths": ["calc.py"], "on_violation": "tamper"}
    verdict = grade_edit(tmp_path, add_task(extra={"grade": {"scope": scope}}), STRAY)
    assert verdict.outcome == "tampered"
    assert [f.code for f in verdict.findings] == ["out-of-scope"]


def test_inside_the_scope_there_is_no_finding(tmp_path: Path) -> None:
    task = add_task(extra={"grade": {"scope": {"paths": ["*.py"]}}})
    verdict = grade_edit(tmp_path, task, {"calc.py": ADD_FIXED})
    assert verdict.outcome == "pass" and verdict.findings == ()


def test_the_scoreboard_counts_trials_that_left_the_scope() -> None:
    stray = Finding(code="out-of-scope", path="NOTES.md", severity="report")
    results = [
        trial_result("t1", "a", status="completed", outcome="pass",
                     grading=Verdict(outcome="pass", findings=(stray,))),
        trial_result("t2", "a", status="completed", outcome="pass",
                     grading=Verdict(outcome="pass")),
        trial_result("t1", "b", status="completed", outcome="fail",
                     grading=Verdict(outcome="fail")),
        trial_result("t2", "b", status="completed", outcome="fail",
                     grading=Verdict(outcome="fail")),
    ]  # fmt: skip
    report = build_report(results)
    rows = {row.variant: row for row in report.harnesses}
    assert (rows["a"].out_of_scope, rows["b"].out_of_scope) == (1, 0)
    console = Console(width=200, record=True)
    console.print(render_report(report))
    text = console.export_text()
    assert "Out of scope" in text
    unscoped = Console(width=200, record=True)
    unscoped.print(render_report(build_report(results[1:])))
    assert "Out of scope" not in unscoped.export_text()
