"""The grader's self-test on a suite: proof that each task can tell a right change from none.

For every task: the reference solution must pass; the untouched repository and the ``noop``
agent must fail. A task whose hidden tests already pass on the untouched repository is broken:
every agent, even one that does nothing, would score a pass. Then every self-test fixture the
task declares (``[[check.fixtures]]``) is graded and held to its declared verdict, visible
result and diff bounds; one that disagrees breaks the task too.

Every case is a trial job on one executor, run by the same trial core as ``run``: the reference
and noop agents and each fixture (:class:`FixtureAgent`) as single attempts. The untouched
repository is the same input as a noop run that changed nothing, so it gets that run's verdict;
only when the noop run left a change (or never got graded) is it a job of its own, a known
change graded without any workspace. The visible command never decides an outcome, so the
self-test skips it, except for a fixture that declares its result.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path

from harnessdrive.checking.cases import CheckCase, TaskCheck
from harnessdrive.checking.fixtures import FixtureAgent, disagreements, visible_word
from harnessdrive.checking.improve import improve_cases, improve_report
from harnessdrive.checking.mined import (
    REWRITTEN,
    RewriteAgent,
    change_problems,
    rewrite_case,
    wants_rewrite,
)
from harnessdrive.checking.recorded import record_reference
from harnessdrive.checking.repeats import (
    RepeatedCases,
    flag_disagreements,
    repeat_folder,
)
from harnessdrive.checking.room import room_problems
from harnessdrive.executors.interface import DEFAULT_EXECUTOR, Executor
from harnessdrive.executors.registry import create_executor
from harnessdrive.grading import reference_outcomes
from harnessdrive.grading.differential.baselines import (
    Baseline,
    graded_baselines,
    naive_attempt,
    suite_baselines,
)
from harnessdrive.grading.verdict import Verdict
from harnessdrive.harnesses.base import Harness
from harnessdrive.harnesses.scripted import NaiveAgent, NoopAgent, ReferenceAgent
from harnessdrive.protocols.base import GivenChange
from harnessdrive.protocols.known_change import NO_AGENT
from harnessdrive.sandbox.runner import SandboxKind
from harnessdrive.store.results import DiffStats, TrialResult
from harnessdrive.tasks.loading import Fixture, Suite, Task
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.trial.job import JobResult, TrialSettings, WorkerSettings
from harnessdrive.trial.standalone import known_change_job, received, standalone_job
from harnessdrive.workspace.tree_size import tasks_footprint

UNTOUCHED = "untouched"
_SNAPSHOT_FAILED = "snapshot build failed: "  # the trial core's message for that stage


def self_test(
    suite: Suite,
    *,
    logs: Path,
    jobs: int = 1,
    sandbox: SandboxKind = "auto",
    executor: str = DEFAULT_EXECUTOR,
    python: str = sys.executable,
    repeat: int = 1,
) -> list[TaskCheck]:
    """Check every task on a new executor of ``jobs`` workers (see :func:`check_suite`)."""
    # Every case is a known change, so the copies may go to a memory file system with room.
    footprint = tasks_footprint(suite.tasks, jobs)
    settings = WorkerSettings(
        jobs=max(jobs, 1), sandbox=sandbox, python=python, footprint=footprint
    )
    runner = create_executor(executor, settings)
    try:
        return check_suite(suite, executor=runner, logs=logs, repeat=repeat)
    except BaseException:
        runner.stop()
        raise
    finally:
        runner.close()


def check_baselines(
    suite: Suite, checks: list[TaskCheck], *, sandbox: SandboxKind, python: str
) -> dict[str, list[Baseline]]:
    """Every differential task's baselines by task id: the oracle's, measured now, then those
    its self-test graded as trials."""
    probes = suite_baselines(suite, sandbox=sandbox, python=python)
    return {
        item.task: [*probes.get(item.task, []), *item.baselines]
        for item in checks
        if item.task in probes or item.baselines
    }


def check_suite(
    suite: Suite,
    *,
    executor: Executor,
    logs: Path,
    repeat: int = 1,
    checked: Callable[[int, Task, TaskCheck], None] | None = None,
) -> list[TaskCheck]:
    """Check every task; each case's logs are kept under ``logs/<task>/<case>/``.

    Every case of every task is submitted at once, earlier tasks first, so tasks finish in
    suite order while each free worker takes the next case. With ``repeat`` above 1 the
    reference and the untouched repository are graded that many times in all, and a task whose
    verdicts disagree is flaky (checking/repeats.py). ``checked`` is called with each task's
    place and report as soon as it is done (the audit then submits the task's exploits, which
    are graded against the reference's outcomes recorded by then).
    """
    submitted = [
        [
            _submit(executor, suite.name, task, case, logs / task.id / case.folder, (place, n))
            for n, case in enumerate(_cases(task), start=1)
        ]
        for place, task in enumerate(suite.tasks)
    ]
    further = [
        _repeats(executor, suite.name, task, logs / task.id, place, repeat)
        for place, task in enumerate(suite.tasks)
    ]
    naive = [
        _submit(executor, suite.name, task, _NAIVE, logs / task.id / _NAIVE.folder, (place, 900))
        if naive_attempt(task)
        else None
        for place, task in enumerate(suite.tasks)
    ]
    reports = []
    for place, (task, cases) in enumerate(zip(suite.tasks, submitted, strict=True)):
        results = [(item.case, item.result()) for item in cases]
        if task.spec.improve is not None:
            found = {case.name: result for case, result in results}
            report = improve_report(task, found, logs / task.id)
            flag_disagreements(report, found, further[place])
            reports.append(report)
            if checked is not None:
                checked(place, task, report)
            continue
        noop = next(result for case, result in results if case.name == "noop")
        if not _unchanged(noop):
            logs_of = logs / task.id / UNTOUCHED
            noop = _submit(executor, suite.name, task, _UNTOUCHED, logs_of, (place, 0)).result()
        recorded = None
        if task.solution is not None:
            results, recorded = _with_recorded_reference(
                executor, suite.name, task, results, logs / task.id, place
            )
        report = _report(task, [(_UNTOUCHED, noop), *results], logs / task.id)
        attempt = naive[place]
        report.baselines = graded_baselines(
            task, _graded(noop)[0], _graded(attempt.result())[0] if attempt else None
        )
        report.notes.extend(filter(None, [recorded]))
        first = {case.name: result for case, result in [(_UNTOUCHED, noop), *results]}
        flag_disagreements(report, first, further[place])
        reports.append(report)
        if checked is not None:
            checked(place, task, report)
    return reports


def _repeats(
    executor: Executor, suite: str, task: Task, logs: Path, place: int, repeat: int
) -> RepeatedCases:
    """The further runs of the reference and the untouched repository, submitted now."""
    cases = [_UNTOUCHED]
    if task.spec.improve is not None:  # its reference overlays and the untouched repository
        cases = [_Case(name, name, agent, "") for name, agent in _IMPROVE_AGENTS]
    elif task.solution is not None:
        cases.insert(0, _Case("reference", "reference", ReferenceAgent(), "pass"))
    further: RepeatedCases = {}
    for case in cases:
        for run in range(2, repeat + 1):
            named = replace(case, folder=f"{case.folder}-repeat{run}")
            logs_of = repeat_folder(logs, case.folder, run)
            submitted = _submit(executor, suite, task, named, logs_of, (place, 1000 + run))
            further.setdefault(case.name, []).append(submitted.result)
    return further


@dataclass(frozen=True)
class _Case:
    name: str
    folder: str
    harness: Harness
    expected: str
    fixture: Fixture | None = None
    variant: VariantSpec | None = None
    """Settings of the run beyond the task's (an improvement task's rounds, say)."""
    task: Task | None = None
    """The task as this case runs it, when not as written (more samples of its objective)."""
    change: GivenChange | None = None
    """A change graded as given (the ``known-change`` protocol) instead of ``harness`` run."""


@dataclass(frozen=True)
class _Submitted:
    case: _Case
    future: Future[JobResult]
    logs: Path
    """Where the case's files go once it is over."""

    def result(self) -> TrialResult:
        return received(self.future.result(), self.logs)


_UNTOUCHED = _Case(UNTOUCHED, UNTOUCHED, NO_AGENT, "fail", change=GivenChange())
_NAIVE = _Case("naive", "baseline-naive", NaiveAgent(), "")
"""A differential task's naive attempt, a baseline its score is held to (not a case)."""
_IMPROVE_AGENTS: tuple[tuple[str, Harness], ...] = (
    ("reference", ReferenceAgent()),
    ("noop", NoopAgent()),
)


def _cases(task: Task) -> list[_Case]:
    """Every case but the untouched repository's."""
    cases = []
    if task.spec.improve is not None:  # rounds of the improve protocol: see selftest/improve.py
        cases = [_Case(name, name, agent, "") for name, agent in _IMPROVE_AGENTS]
        return cases + [
            _Case(
                name,
                name,
                agent,
                "",
                variant=VariantSpec(harness=agent.name, improve=over),
                task=run_on,
            )
            for name, agent, over, run_on in improve_cases(task)
        ]
    if task.solution is not None:
        cases.append(_Case("reference", "reference", ReferenceAgent(), "pass"))
    cases.append(_Case("noop", "noop", NoopAgent(), "fail"))
    cases.extend(
        _Case(f.name, f"fixture{n}-{f.name}", FixtureAgent(f), f.spec.expect, fixture=f)
        for n, f in enumerate(task.fixtures)
    )
    if wants_rewrite(task):
        cases.append(_Case(REWRITTEN, REWRITTEN, RewriteAgent(), "pass"))
    return cases


def _submit(
    executor: Executor,
    suite: str,
    task: Task,
    case: _Case,
    logs: Path,
    priority: tuple[int, int],
) -> _Submitted:
    visible = case.fixture is not None and case.fixture.spec.visible is not None
    key = f"check:{task.id}:{case.folder}"
    settings = TrialSettings(network="none", run_visible=visible, record_folder=logs)
    if case.change is not None:
        job = known_change_job(
            case.task or task, case.change, key=key, suite=suite, settings=settings
        )
    else:
        job = standalone_job(
            case.task or task,
            case.harness,
            key=key,
            suite=suite,
            variant=case.variant,
            settings=settings,
        )
    return _Submitted(case, executor.submit(job, priority=priority), logs)


def _with_recorded_reference(
    executor: Executor,
    suite: str,
    task: Task,
    results: list[tuple[_Case, TrialResult]],
    logs: Path,
    place: int,
) -> tuple[list[tuple[_Case, TrialResult]], str | None]:
    """The reference's outcomes recorded in the task folder; a reference that failed before the
    record existed (a test it skips for a reason its file does not declare) is graded again
    with it. Returns the results and the note that says a record was written."""
    at = next((i for i, (case, _) in enumerate(results) if case.name == "reference"), None)
    if at is None:
        return results, None
    case, result = results[at]
    verdict, _ = _graded(result)
    note = record_reference(task, verdict)
    if note is None or verdict.outcome == "pass" or reference_outcomes.fresh(task) is None:
        return results, note
    again = _submit(executor, suite, task, case, logs / f"{case.folder}-recorded", (place, 0))
    return [*results[:at], (case, again.result()), *results[at + 1 :]], note


def _unchanged(result: TrialResult) -> bool:
    """A graded run that left no change: the same input as the untouched repository."""
    _, diff = _graded(result)
    return diff is not None and diff.files_changed == 0


def _report(task: Task, results: list[tuple[_Case, TrialResult]], logs: Path) -> TaskCheck:
    report = TaskCheck(task=task.id)
    unbuilt = _snapshot_error(results[0][1])
    if unbuilt is not None:
        report.problems.append(f"cannot build the base state: {unbuilt}")
        return report
    report.problems.extend(change_problems(task))
    reference_lines = None
    reference_passed = False
    for case, result in results:
        verdict, diff = _graded(result)
        if case.name == REWRITTEN and case.fixture is None:
            shown, rejected, notes = rewrite_case(verdict, diff, logs / case.folder)
            report.cases.extend([shown] if shown else [])
            # A reference that fails already breaks the task; its rewrite proves nothing more.
            report.problems.extend(rejected if reference_passed else [])
            report.notes.extend(notes)
            continue
        reference_passed = reference_passed or (
            case.name == "reference" and verdict.outcome == "pass"
        )
        if case.fixture is not None:
            report.cases.append(_fixture_case(case.fixture, verdict, diff, reference_lines))
            problems = report.cases[-1].disagreements
            report.problems.extend(f"fixture {case.name}: {problem}" for problem in problems)
            continue
        changed = diff is not None and diff.files_changed > 0
        if case.name == "reference" and diff is not None:
            reference_lines = diff.lines_changed
        if case.name == "reference" and verdict.outcome == "pass":
            report.problems.extend(room_problems(task, verdict))
        report.cases.append(
            CheckCase(
                case.name,
                case.expected,
                verdict.outcome,
                _detail(verdict),
                files=diff.files_changed if changed and diff else None,
                lines=diff.lines_changed if changed and diff else None,
            )
        )
        if case.name == UNTOUCHED:
            if verdict.outcome == "pass":
                report.problems.append(
                    "the hidden tests already pass on the untouched repository, so doing nothing"
                    " passes"
                )
            elif verdict.outcome != "fail":
                report.problems.append(
                    f"the untouched repository could not be graded: {_detail(verdict)}"
                )
            if task.solution is None:
                report.problems.append(
                    "no reference solution (solution/solution.patch or solution/)"
                )
        elif verdict.outcome != case.expected:
            report.problems.append(
                f"{case.name} should {case.expected} but got {verdict.outcome}: {_detail(verdict)}"
            )
    return report


def _fixture_case(
    fixture: Fixture, verdict: Verdict, diff: DiffStats | None, reference_lines: int | None
) -> CheckCase:
    spec = fixture.spec
    if diff is None:
        error = verdict.error or "cannot apply"
        return CheckCase(
            fixture.name,
            spec.expect,
            "not_graded",
            error,
            "fixture",
            visible_expected=spec.visible,
            disagreements=(error,),
        )
    return CheckCase(
        fixture.name,
        spec.expect,
        verdict.outcome,
        _detail(verdict),
        "fixture",
        visible_expected=spec.visible,
        visible=visible_word(verdict),
        files=diff.files_changed,
        lines=diff.lines_changed,
        disagreements=tuple(disagreements(spec, verdict, diff, reference_lines)),
    )


def _snapshot_error(result: TrialResult) -> str | None:
    """Why the task's base state could not be built, when that is why the case never ran."""
    if result.status != "could_not_run" or not result.rounds:
        return None
    error = result.rounds[0].agent.error or ""
    return error.removeprefix(_SNAPSHOT_FAILED) if error.startswith(_SNAPSHOT_FAILED) else None


def _graded(result: TrialResult) -> tuple[Verdict, DiffStats | None]:
    """The case's verdict and its change; a case that never got graded says why, without one."""
    last = result.rounds[-1] if result.rounds else None
    if last is not None and last.grading is not None and result.status != "could_not_run":
        return last.grading, last.diff
    error = (last.agent.error if last is not None else None) or "the agent could not run"
    if result.note:
        error = f"{error}; {result.note}"
    return Verdict(outcome="not_graded", error=error), None


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
