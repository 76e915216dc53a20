"""Self-test fixtures: known changes graded like an agent's, each held to the verdict it must get.

A fixture disagrees when its outcome, its visible result or its diff counts differ from what
``[[check.fixtures]]`` declares (see docs/task-format.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import HarnessdriveError
from harnessdrive.grading.verdict import Verdict
from harnessdrive.tasks.check_models import FixtureSpec
from harnessdrive.tasks.loading import Fixture
from harnessdrive.workspace.changes import Changes, capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import Snapshot
from harnessdrive.workspace.solution import apply_change


@dataclass(frozen=True)
class AppliedFixture:
    changes: Changes | None
    error: str | None = None
    """Why the fixture could not be applied to a fresh copy."""


def apply_fixture(fixture: Fixture, snapshot: Snapshot, scratch: Path) -> AppliedFixture:
    """The fixture's change against the base state, made in a fresh copy under ``scratch``."""
    workspace = copy_snapshot(snapshot, scratch / "workspace")
    try:
        apply_change(fixture.change, workspace)
    except (HarnessdriveError, OSError) as exc:
        return AppliedFixture(changes=None, error=f"cannot apply {fixture.name}: {exc}")
    return AppliedFixture(changes=capture_changes(snapshot, workspace))


def visible_word(verdict: Verdict) -> str | None:
    if verdict.visible is None:
        return None
    return "pass" if verdict.visible.succeeded else "fail"


def disagreements(
    spec: FixtureSpec, verdict: Verdict, changes: Changes, reference_lines: int | None
) -> list[str]:
    """Each way the graded fixture differs from what the task declares; empty when it agrees."""
    found = []
    if verdict.outcome != spec.expect:
        found.append(f"should be {spec.expect} but got {verdict.outcome}")
    if spec.visible is not None and visible_word(verdict) != spec.visible:
        found.append(f"visible tests should {spec.visible} but got {visible_word(verdict)}")
    codes = {finding.code for finding in verdict.findings}
    missing = [code for code in spec.findings if code not in codes]
    if missing:
        found.append(f"should have the finding(s) {', '.join(missing)}")
    files, lines = len(changes.files), changes.lines_changed
    for what, value, low, high in (
        ("files", files, spec.min_files, spec.max_files),
        ("lines", lines, spec.min_lines, spec.max_lines),
    ):
        if low is not None and value < low:
            found.append(f"changes {value} {what}, fewer than the declared minimum {low}")
        if high is not None and value > high:
            found.append(f"changes {value} {what}, more than the declared maximum {high}")
    if spec.more_lines_than_reference:
        if reference_lines is None:
            found.append("no reference solution's diff to compare with")
        elif lines <= reference_lines:
            found.append(f"changes {lines} lines, not more than the reference's {reference_lines}")
    return found
