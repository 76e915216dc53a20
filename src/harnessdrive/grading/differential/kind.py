"""The ``differential`` grader kind: the candidate against the frozen, oracle-answered cases."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Sequence
from contextlib import AbstractContextManager
from itertools import zip_longest
from pathlib import Path
from typing import Any

from harnessdrive.errors import GradingError, TaskFormatError
from harnessdrive.grading.differential.casesets import CaseRow, read_case_set
from harnessdrive.grading.differential.command_candidate import (
    CommandCandidate,
    CommandSession,
    python_module,
)
from harnessdrive.grading.differential.compare import canonical, same
from harnessdrive.grading.differential.execute import (
    Candidate,
    CandidateRun,
    CandidateSession,
    CaseAnswer,
)
from harnessdrive.grading.differential.minimise import shrink
from harnessdrive.grading.differential.oracle import Oracle
from harnessdrive.grading.differential.results import Counterexample, as_details
from harnessdrive.grading.differential.service import AgentRunWatch, oracle_service
from harnessdrive.grading.differential.spec import KIND, DifferentialGradeSpec
from harnessdrive.grading.differential.static_check import DEFAULT_ALLOWED, check_candidate
from harnessdrive.grading.kinds.base import GradingCopy
from harnessdrive.grading.verdict import Finding, Verdict
from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import Sandbox
from harnessdrive.tasks.loading import Task


class DifferentialKind:
    """Pass when the candidate answers (by default) every frozen case as the oracle did."""

    name = KIND
    spec_model = DifferentialGradeSpec

    def around_agent_run(
        self, task: Task, sandbox: Sandbox
    ) -> AbstractContextManager[AgentRunWatch]:
        """The oracle's service for the agent, when the task's oracle offers one."""
        return oracle_service(task, sandbox)

    def grade(self, copy: GradingCopy, spec: DifferentialGradeSpec) -> Verdict:
        cases = read_case_set(copy.task.folder / spec.cases, spec).rows
        return grade_candidate(
            spec,
            cases,
            task_folder=copy.task.folder,
            root=copy.root,
            work=copy.scratch / "differential",
            sandbox=copy.setup.sandbox,
            python=copy.setup.python,
            stop=copy.setup.stop,
            logs=copy.logs,
        )


MIN_ANSWER_BOUND = 64 * 1024
"""Bytes of JSON an answer may always have before only its size and digest are kept."""


def grade_candidate(
    spec: DifferentialGradeSpec,
    cases: tuple[CaseRow, ...],
    *,
    task_folder: Path,
    root: Path,
    work: Path,
    sandbox: Sandbox,
    python: str,
    stop: StopToken | None = None,
    logs: Path | None = None,
) -> Verdict:
    """The verdict on the candidate in ``root`` (a grading copy, or any folder for ``check``)."""
    module = candidate_module(spec, root)
    static = check_candidate(root, module, spec.allowed_modules)[0] if module else ()
    findings = tuple(
        Finding(
            code="forbidden-import",
            path=f.path,
            detail=f"line {f.line}: {f.detail}",
            severity="report",
        )
        for f in static
    )
    _remove_bytecode(root)
    home, tmp = work / "home", work / "tmp"
    for folder in (home, tmp):
        folder.mkdir(parents=True, exist_ok=True)
    session = open_session(
        spec,
        sandbox=sandbox,
        python=python,
        root=root,
        work=work / "cases",
        home=home,
        tmp=tmp,
        stop=stop,
        max_answer_bytes=answer_bound(cases),
    )
    with session:
        run = _answered(session, [row.input for row in cases])
        answers = {a.index: a for a in run.answers}
        passed = [_agrees(row, answers[i], spec) for i, row in enumerate(cases)]
        metrics = _metrics(cases, passed)
        metrics["case_seconds"] = round(run.seconds, 3)
        counterexamples: tuple[Counterexample, ...] = ()
        refused = bool(findings) or bool(session.forbidden)
        # A candidate the static check or the run-time guard refuses scores 0 whatever it
        # answers: nothing to shrink.
        if (
            spec.minimise
            and spec.parts
            and not all(passed)
            and not (refused and spec.static == "fail")
        ):
            oracle = Oracle(task_folder, spec.oracle)
            counterexamples = _counterexamples(spec, cases, passed, session, oracle)
            metrics["counterexamples"] = float(len(counterexamples))
            metrics["minimiser_oracle_calls"] = float(oracle.calls)
        metrics["workers"] = float(session.workers)
        findings += tuple(
            Finding(
                code="forbidden-import",
                detail=f"at run time: {what}",
                severity="report",
            )
            for what in sorted(session.forbidden)
        )
    metrics["static_findings"] = float(len(findings))
    blocked = bool(findings) and spec.static == "fail"
    score = metrics["pass_rate"]
    if blocked:
        score = 0.0
    outcome = "pass" if score >= spec.threshold and not blocked else "fail"
    verdict = Verdict(
        outcome=outcome,
        score=score,
        metrics=metrics,
        findings=findings,
        details=as_details(counterexamples),
    )
    if logs is not None:
        _write_report(logs / "differential.json", cases, passed, answers, counterexamples)
    return verdict


Session = CandidateSession | CommandSession


def candidate_module(spec: DifferentialGradeSpec, root: Path) -> str | None:
    """The repository module the candidate starts from, for the static check (None: a
    command that is not Python, contained by the sandbox alone)."""
    if spec.candidate is not None:
        return spec.candidate.partition(":")[0]
    return python_module(spec.candidate_command or (), root)


def open_session(
    spec: DifferentialGradeSpec,
    *,
    sandbox: Sandbox,
    python: str,
    root: Path,
    work: Path,
    home: Path,
    tmp: Path,
    stop: StopToken | None = None,
    max_answer_bytes: int | None = None,
) -> Session:
    """The candidate's session: a worker for ``module:function``, one sandboxed process per
    case for a command. ``max_answer_bytes``: answers longer than this (canonical JSON) are
    held only as their size and digest (worker candidates)."""
    hide = tuple(Path(p) for p in spec.hide)
    if spec.candidate_command is not None:
        return CommandSession(
            CommandCandidate(
                sandbox=sandbox,
                python=python,
                root=root,
                words=spec.candidate_command,
                work=work,
                home=home,
                tmp=tmp,
                case_timeout=spec.case_timeout,
                stop=stop,
                hide=hide,
            )
        )
    assert spec.candidate is not None
    module, _, function = spec.candidate.partition(":")
    return CandidateSession(
        Candidate(
            sandbox=sandbox,
            python=python,
            root=root,
            module=module,
            function=function,
            work=work,
            home=home,
            tmp=tmp,
            case_timeout=spec.case_timeout,
            stop=stop,
            hide=hide,
            allowed=DEFAULT_ALLOWED | frozenset(spec.allowed_modules),
            max_answer_bytes=max_answer_bytes,
        )
    )


def answer_bound(cases: tuple[CaseRow, ...]) -> int:
    """The longest answer worth holding: canonical JSON equal to an expected answer is as long
    as it, so an answer past every expected one (with room to spare) can only disagree."""
    longest = max((len(canonical(row.expected)) for row in cases), default=0)
    return max(4 * longest, MIN_ANSWER_BOUND)


def _agrees(row: CaseRow, answer: CaseAnswer, spec: DifferentialGradeSpec) -> bool:
    return answer.error is None and same(row.expected, answer.answer, spec.comparator)


def _metrics(cases: tuple[CaseRow, ...], passed: list[bool]) -> dict[str, float]:
    total, good = Counter[str](), Counter[str]()
    for row, ok in zip(cases, passed, strict=True):
        total[row.bucket] += 1
        good[row.bucket] += ok
    metrics = {
        "cases": float(len(cases)),
        "cases_passed": float(sum(passed)),
        "pass_rate": round(sum(passed) / len(cases), 6),
    }
    for bucket in sorted(total):
        metrics[f"rule.{bucket}.cases"] = float(total[bucket])
        metrics[f"rule.{bucket}.passed"] = float(good[bucket])
        metrics[f"rule.{bucket}.rate"] = round(good[bucket] / total[bucket], 6)
    return metrics


def _answered(session: Session, inputs: list[Any]) -> CandidateRun:
    run = session.answer(inputs)
    if run.disturbed is not None:
        raise GradingError(f"invalid: {run.disturbed}")
    return run


def _counterexamples(
    spec: DifferentialGradeSpec,
    cases: tuple[CaseRow, ...],
    passed: list[bool],
    session: Session,
    oracle: Oracle,
) -> tuple[Counterexample, ...]:
    # Each bucket's first failures first, so every broken rule gets its counterexample.
    by_bucket: dict[str, list[int]] = {}
    for i, ok in enumerate(passed):
        if not ok:
            by_bucket.setdefault(cases[i].bucket, []).append(i)
    failing = [i for rank in zip_longest(*by_bucket.values()) for i in rank if i is not None]

    def disagrees(reduced: Sequence[Any]) -> list[bool]:
        tried = _answered(session, list(reduced))
        return [
            answer.error is not None
            or not same(oracle.answer(case), answer.answer, spec.comparator)
            for case, answer in zip(reduced, tried.answers, strict=True)
        ]

    found = []
    for index in failing[: spec.max_counterexamples]:
        row = cases[index]
        shrunk = shrink(row.input, spec.parts, disagrees)
        final = _answered(session, [shrunk.case]).answers[0]
        found.append(
            Counterexample.bounded(
                case=row.id,
                bucket=row.bucket,
                rules=oracle.rules_of(shrunk.case),
                input=shrunk.case,
                expected=oracle.answer(shrunk.case),
                actual=final.answer,
                error=final.error,
                size_before=shrunk.size_before,
                size_after=shrunk.size_after,
            )
        )
    return tuple(sorted(found, key=lambda c: (c.rules, c.size_after, c.case)))


def _remove_bytecode(root: Path) -> None:
    # Bytecode left by the agent must never stand in for the source the static check read.
    for dirpath, dirnames, _ in os.walk(root):
        if "__pycache__" in dirnames:
            shutil.rmtree(Path(dirpath) / "__pycache__", ignore_errors=True)
            dirnames.remove("__pycache__")
        if ".git" in dirnames:
            dirnames.remove(".git")


def _write_report(
    path: Path,
    cases: tuple[CaseRow, ...],
    passed: list[bool],
    answers: dict[int, CaseAnswer],
    counterexamples: tuple[Counterexample, ...],
) -> None:
    rows = [
        {"id": row.id, "bucket": row.bucket, "pass": ok, "error": answers[i].error}
        for i, (row, ok) in enumerate(zip(cases, passed, strict=True))
    ]
    groups: dict[str, list[str]] = {}
    for example in counterexamples:
        groups.setdefault("+".join(example.rules) or "documented", []).append(example.case)
    report = {
        "rows": rows,
        "counterexample_groups": groups,
        "counterexamples": [c.model_dump(mode="json") for c in counterexamples],
    }
    try:
        path.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise TaskFormatError(f"cannot write {path.name}: {exc}") from None
