"""Run the exploit library against every task of a suite and record what each got.

Every exploit of every task is a trial job on one executor (the same trial core as ``run``), so
the workers stay busy; each job reuses the task's snapshot like any trial. ``check --audit``
runs the self-test on the same executor (:func:`check_and_audit`).
An improvement task is audited by the self-test's own objective attacks
(checking/attacks.py), read back from its report.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Collection, Sequence
from concurrent.futures import Future
from pathlib import Path

from harnessdrive.audit.exploits import Exploit, ExploitAgent, exploits_for
from harnessdrive.audit.record import ExploitOutcome, TaskAudit, write_audit
from harnessdrive.audit.static import answer_in_prompt
from harnessdrive.checking.attacks import ATTACKS
from harnessdrive.checking.cases import TaskCheck
from harnessdrive.checking.suite import check_suite
from harnessdrive.executors.interface import DEFAULT_EXECUTOR, Executor
from harnessdrive.executors.registry import create_executor
from harnessdrive.grading.taxonomy import counted
from harnessdrive.running.sandbox_choice import private_paths, secret_paths
from harnessdrive.sandbox.runner import SandboxKind
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import Suite, Task
from harnessdrive.trial.job import JobResult, TrialSettings, WorkerSettings
from harnessdrive.trial.standalone import received, standalone_job
from harnessdrive.workspace.tree_size import tasks_footprint

OBJECTIVE = "objective"
"""What ``only`` names to include the objective attacks of improvement tasks."""
_OBJECTIVE_FIX = (
    "measure through the objective runner or from outside the measured process, so nothing the "
    "measured code prints or writes is read as the value (docs/improvement.md)"
)


def audit(
    suite: Suite,
    *,
    logs: Path,
    jobs: int = 1,
    sandbox: SandboxKind = "auto",
    executor: str = DEFAULT_EXECUTOR,
    python: str = sys.executable,
    record: bool = True,
    checks: Sequence[TaskCheck] | None = None,
    only: Collection[str] | None = None,
) -> list[TaskAudit]:
    """Audit every task on a new executor of ``jobs`` workers; with ``record``, each task's
    result is written beside it (``audit.json``); with ``only``, just the exploits so named
    run (and no objective attack unless ``objective`` is among them).

    ``checks`` is the suite's self-test when it ran already (``check --audit``): its problems
    count against each task's trust, and an improvement task's objective attacks are read from
    it instead of being run again."""
    runner = create_executor(executor, audit_settings(suite, logs, jobs, sandbox, python))
    try:
        found = audit_suite(suite, executor=runner, logs=logs, checks=checks, only=only)
    except BaseException:
        runner.stop()
        raise
    finally:
        runner.close()
    if record:
        for task, item in zip(suite.tasks, found, strict=True):
            write_audit(task.folder, item)
    return found


def audit_settings(
    suite: Suite, logs: Path, jobs: int, sandbox: SandboxKind, python: str
) -> WorkerSettings:
    """The workers' settings: the sandbox hides what a run's hides (the suite, every task folder,
    its hidden files and reference, the logs), so an exploit reads no more than an agent could."""
    secrets = secret_paths(suite, logs, logs)
    return WorkerSettings(
        jobs=max(jobs, 1),
        sandbox=sandbox,
        python=python,
        hidden=tuple(dict.fromkeys(secrets)),
        private=tuple(private_paths()),
        footprint=tasks_footprint(suite.tasks, jobs),
    )


def check_and_audit(
    suite: Suite,
    *,
    logs: Path,
    jobs: int = 1,
    sandbox: SandboxKind = "auto",
    executor: str = DEFAULT_EXECUTOR,
    python: str = sys.executable,
    repeat: int = 1,
) -> tuple[list[TaskCheck], list[TaskAudit]]:
    """``check --audit``: the self-test (its logs under ``logs``) and the exploit library
    (under ``logs/audit``) on one executor of ``jobs`` workers, each task's trust recorded
    beside it.

    A task's exploits are submitted as soon as its self-test is done, ahead of the later tasks'
    cases, so the workers never wait between the two and each task's snapshot and setup are
    made once for both; by then the reference's outcomes are recorded (checking/recorded.py),
    and the exploits are graded against them as every later trial is."""
    runner = create_executor(executor, audit_settings(suite, logs, jobs, sandbox, python))
    try:
        pending: dict[int, list[tuple[Exploit, tuple[Future[JobResult], Path]]]] = {}

        def submit(place: int, task: Task, report: TaskCheck) -> None:
            pending[place] = _task_exploits(runner, suite.name, place, task, logs / "audit")

        checks = check_suite(suite, executor=runner, logs=logs, repeat=repeat, checked=submit)
        submitted = [pending[place] for place in range(len(suite.tasks))]
        found = _collect(suite, submitted, runner, logs / "audit", checks)
    except BaseException:
        runner.stop()
        raise
    finally:
        runner.close()
    for task, item in zip(suite.tasks, found, strict=True):
        write_audit(task.folder, item)
    return checks, found


_Pending = list[list[tuple[Exploit, tuple[Future[JobResult], Path]]]]
"""Each task's exploits with their submitted jobs, in suite order."""


def audit_suite(
    suite: Suite,
    *,
    executor: Executor,
    logs: Path,
    checks: Sequence[TaskCheck] | None = None,
    only: Collection[str] | None = None,
) -> list[TaskAudit]:
    submitted = [
        _task_exploits(executor, suite.name, place, task, logs, only)
        for place, task in enumerate(suite.tasks)
    ]
    attacked = only is None or OBJECTIVE in only
    return _collect(suite, submitted, executor, logs, checks, attacked)


def _task_exploits(
    executor: Executor,
    suite: str,
    place: int,
    task: Task,
    logs: Path,
    only: Collection[str] | None = None,
) -> list[tuple[Exploit, tuple[Future[JobResult], Path]]]:
    return [
        (exploit, _submit(executor, suite, task, exploit, logs, (place, n)))
        for n, exploit in enumerate(exploits_for(task))
        if only is None or exploit.name in only
    ]


def _collect(
    suite: Suite,
    submitted: _Pending,
    executor: Executor,
    logs: Path,
    checks: Sequence[TaskCheck] | None,
    attacked: bool = True,
) -> list[TaskAudit]:
    checked = {item.task: item for item in checks or ()}
    improving = {t.id for t in suite.tasks if t.spec.improve is not None and attacked}
    unchecked = [task for task in suite.tasks if task.id in improving - checked.keys()]
    reports = _self_tests(suite, unchecked, executor, logs) if unchecked else []
    objective = {
        item.task: _attack_outcomes(item)
        for item in [*checked.values(), *reports]
        if item.task in improving
    }
    audits = []
    for task, jobs in zip(suite.tasks, submitted, strict=True):
        item = TaskAudit(task=task.id, fingerprint=task.fingerprint)
        for exploit, (future, folder) in jobs:
            item.exploits.append(exploit_outcome(task, exploit, received(future.result(), folder)))
        item.exploits.extend(objective.get(task.id, []))
        item.problems.extend(answer_in_prompt(task))
        if task.id in checked:
            item.problems.extend(f"self-test: {p}" for p in checked[task.id].problems)
        audits.append(item)
    return audits


def earned_score(task: Task) -> float | None:
    """The most a change that solves nothing may score on ``task``: what its untouched
    repository may score (a differential task's ``starter_score``); None for kinds without
    scores."""
    value = getattr(task.spec.grade, "starter_score", None)
    return float(value) if isinstance(value, int | float) else None


def exploit_outcome(task: Task, exploit: Exploit, result: TrialResult) -> ExploitOutcome:
    """An exploit succeeds with a pass, a score above what solving nothing earns, or a verdict
    left out of every count (the machinery blamed for what the agent's change did)."""
    verdict = result.grading
    score = result.score
    earned = earned_score(task)
    above = score is not None and earned is not None and score > earned
    not_counted = result.outcome == "not_graded" or not counted(result.status)
    detail = result.note or (verdict.error if verdict is not None else None) or ""
    return ExploitOutcome(
        exploit.name,
        "not_graded" if not_counted else result.outcome,
        succeeded=result.outcome == "pass" or above or not_counted,
        fix=exploit.fix,
        detail=detail,
        score=score,
        earned=earned,
    )


def _submit(
    executor: Executor,
    suite: str,
    task: Task,
    exploit: Exploit,
    logs: Path,
    priority: tuple[int, int],
) -> tuple[Future[JobResult], Path]:
    folder = logs / task.id / exploit.name
    job = standalone_job(
        task,
        ExploitAgent(exploit),
        key=f"audit:{task.id}:{exploit.name}",
        suite=suite,
        settings=TrialSettings(network="none", run_visible=False, record_folder=folder),
    )
    return executor.submit(job, priority=priority), folder


def _self_tests(suite: Suite, tasks: list[Task], executor: Executor, logs: Path) -> list[TaskCheck]:
    """The self-test of the improvement tasks, which runs their objective attacks."""
    only = dataclasses.replace(suite, tasks=tuple(tasks))
    return check_suite(only, executor=executor, logs=logs / "objective")


def _attack_outcomes(report: TaskCheck) -> list[ExploitOutcome]:
    """The self-test's objective attacks on an improvement task, as exploits."""
    outcomes = []
    for attack in ATTACKS:
        moved = [p for p in report.problems if f"the {attack} attack moved" in p]
        if attack == "comment":
            moved = [p for p in report.problems if "only adds a comment" in p]
        outcomes.append(
            ExploitOutcome(
                f"objective-{attack}",
                "moved" if moved else "held",
                succeeded=bool(moved),
                fix=_OBJECTIVE_FIX
                if attack != "comment"
                else "raise the objective's repeats or min_improvement",
                detail=moved[0] if moved else "",
            )
        )
    return outcomes
