"""Self-test fixtures: known changes graded like an agent's, each held to the verdict it must get.

A fixture runs as a trial of :class:`FixtureAgent`, a scripted harness that makes the fixture's
change in the trial's workspace, so it is captured and graded exactly as an agent's change. It
disagrees when its outcome, its visible result or its diff counts differ from what
``[[check.fixtures]]`` declares (see docs/task-format.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from harnessdrive.errors import HarnessdriveError
from harnessdrive.grading.verdict import Verdict
from harnessdrive.harnesses.base import AgentRequest, AgentRun, HarnessInfo
from harnessdrive.sandbox.clock import now
from harnessdrive.store.results import DiffStats
from harnessdrive.tasks.check_models import FixtureSpec
from harnessdrive.tasks.loading import Fixture
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.workspace.solution import apply_change

FIXTURE_HARNESS = "fixture"


@dataclass(frozen=True)
class FixtureAgent:
    """Makes one self-test fixture's change (a patch or an overlay), then stops."""

    fixture: Fixture

    @property
    def name(self) -> str:
        return FIXTURE_HARNESS

    def info(self) -> HarnessInfo:
        return HarnessInfo(
            name=FIXTURE_HARNESS, installed=True, version="builtin", detail=self.__doc__ or ""
        )

    def check_variant(self, variant: VariantSpec) -> None:
        return None

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        request.logs.mkdir(parents=True, exist_ok=True)
        try:
            apply_change(self.fixture.change, request.workspace)
        except (HarnessdriveError, OSError) as exc:
            error = f"cannot apply {self.fixture.name}: {exc}"
            request.stderr.write_text(error + "\n")
            # Nothing changed and the run failed: the trial could not run, and says why.
            return AgentRun(
                exit_code=1,
                timed_out=False,
                seconds=now() - started,
                error=error,
                version="builtin",
            )
        return AgentRun(exit_code=0, timed_out=False, seconds=now() - started, version="builtin")


def visible_word(verdict: Verdict) -> str | None:
    if verdict.visible is None:
        return None
    return "pass" if verdict.visible.succeeded else "fail"


def disagreements(
    spec: FixtureSpec, verdict: Verdict, diff: DiffStats, reference_lines: int | None
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
    files, lines = diff.files_changed, diff.lines_changed
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
