"""The grader's self-test on a suite: proof that each task can tell a right change from none.

For every task: the reference solution must pass; the untouched repository and the ``noop``
agent must fail. A task whose hidden tests already pass on the untouched repository is broken:
every agent, even one that does nothing, would score a pass. Then every self-test fixture the
task declares (``[[check.fixtures]]``) is graded and held to its declared verdict, visible
result and diff bounds; one that disagrees breaks the task too.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal

from harnessdrive.errors import GradingError, HarnessdriveError
from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.verdict import Verdict
from harnessdrive.harnesses.base import AgentRequest, Harness
from harnessdrive.harnesses.scripted import NoopAgent, ReferenceAgent
from harnessdrive.protocols.single import agent_status
from harnessdrive.running.fixtures import apply_fixture, disagreements, visible_word
from harnessdrive.running.snapshots import SnapshotCache
from harnessdrive.sandbox.runner import Sandbox
from harnessdrive.sandbox.scratch import make_scratch_root
from harnessdrive.tasks.loading import Fixture, Suite, Task
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.tasks.view import task_view
from harnessdrive.workspace.changes import Changes, capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import Snapshot


@dataclass(frozen=True)
class CheckCase:
    name: str
    """``untouched``, ``reference``, ``noop``, or the fixture's name."""
    expected: str
    outcome: str
    detail: str = ""
    kind: Literal["builtin", "fixture"] = "builtin"
    visible_expected: str | None = None
    visible: str | None = None
    """``pass`` or ``fail`` from the visible command, where it ran."""
    files: int | None = None
    lines: int | None = None
    """Files changed and lines added plus deleted, for a case that changed something."""
    disagreements: tuple[str, ...] = ()
    """How a fixture differs from what the task declares."""

    @property
    def ok(self) -> bool:
        return self.outcome == self.expected and not self.disagreements


@dataclass
class TaskCheck:
    task: str
    cases: list[CheckCase] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def fixtures(self) -> list[CheckCase]:
        return [case for case in self.cases if case.kind == "fixture"]


def checks_json(checks: list[TaskCheck]) -> str:
    """The self-test as JSON: each task with its cases, its problems and whether it is ok."""
    return json.dumps(
        {
            "ok": all(item.ok for item in checks),
            "tasks": [
                {
                    "task": item.task,
                    "ok": item.ok,
                    "problems": item.problems,
                    "cases": [{**asdict(case), "ok": case.ok} for case in item.cases],
                }
                for item in checks
            ],
        },
        indent=2,
    )


def new_logs_folder() -> Path:
    """A new folder for a check's logs, kept after the check (they explain a broken task)."""
    return Path(tempfile.mkdtemp(prefix="harnessdrive-check-logs-"))


def check_suite(
    suite: Suite, *, sandbox: Sandbox, python: str, logs: Path, jobs: int = 1
) -> list[TaskCheck]:
    """Check every task; each case's logs are kept under ``logs/<task>/<case>/``."""
    scratch = make_scratch_root("harnessdrive-check-")
    try:
        snapshots = SnapshotCache(scratch / "snapshots")
        with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
            futures = [
                pool.submit(
                    _check_task,
                    task,
                    snapshots,
                    sandbox,
                    python,
                    _Folders(scratch / f"t{i}", logs / task.id),
                )
                for i, task in enumerate(suite.tasks)
            ]
            return [future.result() for future in futures]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@dataclass(frozen=True)
class _Folders:
    scratch: Path
    """Removed afterwards."""
    logs: Path
    """Kept: every error message names a log in here."""

    def case(self, name: str) -> _Folders:
        return _Folders(self.scratch / name, self.logs / name)


def _check_task(
    task: Task, snapshots: SnapshotCache, sandbox: Sandbox, python: str, folders: _Folders
) -> TaskCheck:
    report = TaskCheck(task=task.id)
    try:
        snapshot = snapshots.get(task)
    except HarnessdriveError as exc:
        report.problems.append(f"cannot build the base state: {exc}")
        return report
    untouched = _grade_untouched(task, snapshot, sandbox, python, folders.case("untouched"))
    report.cases.append(CheckCase("untouched", "fail", untouched.outcome, _detail(untouched)))
    if untouched.outcome == "pass":
        report.problems.append(
            "the hidden tests already pass on the untouched repository, so doing nothing passes"
        )
    elif untouched.outcome != "fail":
        report.problems.append(
            f"the untouched repository could not be graded: {_detail(untouched)}"
        )
    reference_lines = None
    for agent, expected in ((ReferenceAgent(), "pass"), (NoopAgent(), "fail")):
        if agent.name == "reference" and task.solution is None:
            report.problems.append("no reference solution (solution/solution.patch or solution/)")
            continue
        verdict, changes = _run_agent(
            agent, task, snapshots, sandbox, python, folders.case(agent.name), untouched
        )
        if agent.name == "reference" and changes is not None:
            reference_lines = changes.lines_changed
        report.cases.append(
            CheckCase(
                agent.name,
                expected,
                verdict.outcome,
                _detail(verdict),
                files=len(changes.files) if changes else None,
                lines=changes.lines_changed if changes else None,
            )
        )
        if verdict.outcome != expected:
            report.problems.append(
                f"{agent.name} should {expected} but got {verdict.outcome}: {_detail(verdict)}"
            )
    for number, fixture in enumerate(task.fixtures):
        case = _check_fixture(
            fixture,
            task,
            snapshot,
            sandbox,
            python,
            folders.case(f"fixture{number}-{fixture.name}"),
            reference_lines,
        )
        report.cases.append(case)
        report.problems.extend(f"fixture {case.name}: {problem}" for problem in case.disagreements)
    return report


def _check_fixture(
    fixture: Fixture,
    task: Task,
    snapshot: Snapshot,
    sandbox: Sandbox,
    python: str,
    folders: _Folders,
    reference_lines: int | None,
) -> CheckCase:
    spec = fixture.spec
    folders.scratch.mkdir(parents=True)
    applied = apply_fixture(fixture, snapshot, folders.scratch)
    if applied.changes is None:
        error = applied.error or "cannot apply"
        return CheckCase(
            fixture.name,
            spec.expect,
            "not_graded",
            error,
            "fixture",
            visible_expected=spec.visible,
            disagreements=(error,),
        )
    grading = _Folders(folders.scratch / "grading", folders.logs)
    setup = replace(
        _grading(task, snapshot, sandbox, python, grading),
        run_visible=spec.visible is not None,
    )
    verdict = _grade(setup, applied.changes)
    found = disagreements(spec, verdict, applied.changes, reference_lines)
    return CheckCase(
        fixture.name,
        spec.expect,
        verdict.outcome,
        _detail(verdict),
        "fixture",
        visible_expected=spec.visible,
        visible=visible_word(verdict),
        files=len(applied.changes.files),
        lines=applied.changes.lines_changed,
        disagreements=tuple(found),
    )


def _grade_untouched(
    task: Task, snapshot: Snapshot, sandbox: Sandbox, python: str, folders: _Folders
) -> Verdict:
    folders.scratch.mkdir(parents=True)
    setup = _grading(task, snapshot, sandbox, python, folders)
    empty = Changes(base_tree=snapshot.tree, tree=snapshot.tree, files=(), patch=b"")
    return _grade(setup, empty)


def _run_agent(
    agent: Harness,
    task: Task,
    snapshots: SnapshotCache,
    sandbox: Sandbox,
    python: str,
    folders: _Folders,
    untouched: Verdict,
) -> tuple[Verdict, Changes | None]:
    scratch = folders.scratch
    snapshot = snapshots.get(task)
    workspace = copy_snapshot(snapshot, scratch / "workspace")
    for name in ("home", "tmp", "grading"):
        (scratch / name).mkdir()
    folders.logs.mkdir(parents=True, exist_ok=True)
    request = AgentRequest(
        task=task,
        variant=VariantSpec(harness=agent.name),
        prompt=task.prompt,
        prompt_file=scratch / "prompt.md",
        workspace=workspace,
        home=scratch / "home",
        tmp=scratch / "tmp",
        logs=folders.logs,
        timeout=task.spec.limits.agent_timeout,
        sandbox=sandbox,
        network="none",
        python=python,
        readonly=task_view(task, python).readonly,
    )
    run = agent.run(request)
    changes = capture_changes(snapshot, workspace)
    if agent_status(run, changes) == "could_not_run":
        return Verdict(outcome="not_graded", error=run.error or "the agent could not run"), None
    if not changes:
        # The same input as the untouched repository gets the same verdict.
        return untouched, changes
    grading = _Folders(scratch / "grading", folders.logs)
    return _grade(_grading(task, snapshot, sandbox, python, grading), changes), changes


def _grading(
    task: Task, snapshot: Snapshot, sandbox: Sandbox, python: str, folders: _Folders
) -> GradingSetup:
    # The visible command never decides an outcome, so the self-test skips it.
    return GradingSetup(
        task=task,
        snapshot=snapshot,
        scratch=folders.scratch,
        logs=folders.logs,
        sandbox=sandbox,
        python=python,
        run_visible=False,
    )


def _grade(setup: GradingSetup, changes: Changes) -> Verdict:
    try:
        return grade(setup, changes)
    except GradingError as exc:
        return Verdict(outcome="not_graded", error=str(exc))


def _detail(verdict: Verdict) -> str:
    if verdict.error:
        return verdict.error
    parts = []
    if verdict.hidden is not None:
        parts.append(f"tests {verdict.hidden.passed}/{verdict.hidden.total}")
        if verdict.hidden.timed_out:
            parts.append("timed out")
        if verdict.hidden.note:
            parts.append(verdict.hidden.note)
    if verdict.findings:
        parts.append("findings: " + ", ".join(f.code for f in verdict.findings))
    return "; ".join(parts)
