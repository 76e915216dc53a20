"""The ``tests`` grader kind: the task's test command, with the hidden files, decides.

The visible command (tests the agent could see) runs in a grading copy of its own, without the
hidden files, at the same time as the deciding run: it executes the agent's code, which may write
into its copy or HOME (a conftest.py, a usercustomize), so it gets copies of its own and its own
sandbox, and never sees the deciding copy. Its counts are reported apart and never decide.

The deciding run counts from a junit report written outside the copy, judged against canaries
(planted tests of known outcome) where the runner is one the witness knows; beside it, starting
with it, the twin of one hidden test runs in a copy of its own (grading/twin_run.py).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from harnessdrive.errors import GradingError
from harnessdrive.grading import twin_run
from harnessdrive.grading.commands import run_command
from harnessdrive.grading.guarded import plant_canaries
from harnessdrive.grading.kinds.base import GradingCopy
from harnessdrive.grading.verdict import Finding, GradingRun, Verdict
from harnessdrive.tasks.models import GradeSpec
from harnessdrive.workspace.placing import write_file

KIND = "tests"
VISIBLE_LABEL = "visible"


class TestsGradeSpec(GradeSpec):
    """``[grade]`` of kind ``tests``: a test command decides."""

    __test__ = False  # a table, not a test class, whatever its name says

    kind: Literal["tests"] = "tests"
    """``tests`` (the default): the test command, run with the hidden files, decides."""
    command: str
    """The test command; exit 0 with every reported test passing means pass."""
    visible_command: str | None = None
    """Tests the agent could see, run in a grading copy without the hidden files; reported
    apart, never deciding."""
    junit: bool = True
    """Count passed/total from a junit report where the runner can write one."""

    @property
    def visible_test_command(self) -> str | None:
        return self.visible_command


class TestsKind:
    """Pass when the test command's run, with the hidden files, passes every test it counts."""

    __test__ = False

    name = KIND
    spec_model = TestsGradeSpec

    def grade(self, copy: GradingCopy, spec: TestsGradeSpec) -> Verdict:
        if not (spec.visible_command and copy.setup.run_visible):
            hidden, witnessed = _run_deciding(copy, spec)
            return _verdict(None, hidden, witnessed)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="grade-visible") as pool:
            visible = pool.submit(_run_visible, copy, spec, spec.visible_command)
            try:
                hidden, witnessed = _run_deciding(copy, spec)
            finally:
                # The visible run ends on its own (its timeout, the stop token). Waiting for it
                # here removes its copy before ours, and its error wins as when it ran first.
                visible_run = visible.result()
        return _verdict(visible_run, hidden, witnessed)


def _verdict(
    visible: GradingRun | None, hidden: GradingRun, witnessed: tuple[Finding, ...]
) -> Verdict:
    return Verdict(
        outcome="pass" if hidden.succeeded else "fail",
        visible=visible,
        hidden=hidden,
        findings=witnessed,
    )


def _run_deciding(
    copy: GradingCopy, spec: TestsGradeSpec
) -> tuple[GradingRun, tuple[Finding, ...]]:
    # Canaries of known outcome go into the hidden test files: the witness of an honest run.
    canaries = plant_canaries(copy.task, copy.values, command=spec.command, junit=spec.junit)
    if canaries.plan is None:
        return run_command(
            copy, spec.command, twin_run.LABEL, timeout=spec.timeout, junit=spec.junit
        )
    for target, path in copy.hidden.items():
        content = canaries.contents.get(target)
        if content is not None and path.is_file():
            write_file(copy.root, target, content)
    plan = canaries.plan
    # One hidden test once more with its expectation perturbed, in a run of its own that starts
    # with the deciding one.
    with twin_run.started_twin(
        copy, spec.command, timeout=spec.timeout, junit=spec.junit, plan=plan,
        contents=canaries.contents,
    ) as twin:  # fmt: skip
        run, found = run_command(
            copy, spec.command, twin_run.LABEL, timeout=spec.timeout, junit=spec.junit, plan=plan
        )
        result = twin.result() if twin is not None else None
    if result is None or not run.succeeded or found:
        return run, found  # a twin can only turn a pass into tampered
    twins, witnessed = twin_run.judge_twin(result, plan, run)
    return run.model_copy(update={"twins": twins}), (*found, *witnessed)


def _run_visible(copy: GradingCopy, spec: TestsGradeSpec, command: str) -> GradingRun | None:
    """The visible command in a copy of its own; None when setup fails there (the deciding run
    reports that failure)."""
    with copy.fresh(VISIBLE_LABEL) as own:
        if own is None:
            return None
        run, _ = run_command(own, command, VISIBLE_LABEL, timeout=spec.timeout, junit=spec.junit)
        return run


def tests_spec(spec: GradeSpec) -> TestsGradeSpec:
    """``spec`` as a ``tests`` table; mining writes and edits only tasks of this kind."""
    if not isinstance(spec, TestsGradeSpec):
        raise GradingError(f"a grader of kind {spec.kind!r} has no test command")
    return spec
