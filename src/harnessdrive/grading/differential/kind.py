"""The ``differential`` grader kind: the candidate against the frozen, oracle-answered cases."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from itertools import zip_longest
from pathlib import Path
from typing import Any

from harnessdrive.errors import GradingError, TaskFormatError
from harnessdrive.grading.differential.attribution import explain, explain_all
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
from harnessdrive.sandbox.clock import now
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
        run, graded = _answered_within(session, [row.input for row in cases], spec.timeout)
        answers = {a.index: a for a in run.answers}
        passed = [_agrees(row, answers[i], spec) for i, row in enumerate(cases)]
        refused = bool(findings) or bool(session.forbidden)
        oracle = Oracle(task_folder, spec.oracle)
        try:
            blamed = _blamed(spec, cases, passed, answers, None if refused else oracle)
            metrics = _metrics(cases, passed, blamed)
            metrics["case_seconds"] = round(run.seconds, 3)
            metrics["cases_graded"] = float(graded)
            timed_out = graded < len(cases)
            counterexamples = (
                () if timed_out else _shrunk(spec, cases, passed, session, oracle, refused)
            )
            if counterexamples:
                metrics["counterexamples"] = float(len(counterexamples))
                metrics["minimiser_oracle_calls"] = float(oracle.calls)
        finally:
            oracle.close()
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
    outcome = "pass" if score >= spec.threshold and not blocked and not timed_out else "fail"
    verdict = Verdict(
        outcome=outcome,
        score=score,
        metrics=metrics,
        findings=findings,
        details=as_details(counterexamples),
        error=(
            f"grading time limit: {graded} of {len(cases)} cases graded within "
            f"{spec.timeout:g}s (grade.timeout); the rest fail"
            if timed_out
            else None
        ),
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


def _shrunk(
    spec: DifferentialGradeSpec,
    cases: tuple[CaseRow, ...],
    passed: list[bool],
    session: Session,
    oracle: Oracle,
    refused: bool,
) -> tuple[Counterexample, ...]:
    # A candidate the static check or the run-time guard refuses scores 0 whatever it
    # answers: nothing to shrink.
    if not spec.minimise or not spec.parts or all(passed) or (refused and spec.static == "fail"):
        return ()
    return _counterexamples(spec, cases, passed, session, oracle)


def _blamed(
    spec: DifferentialGradeSpec,
    cases: tuple[CaseRow, ...],
    passed: list[bool],
    answers: dict[int, CaseAnswer],
    oracle: Oracle | None,
) -> list[tuple[str, ...] | None]:
    """For each case, the rules its failure is attributed to by switching (None: passed, or
    not explained, so it counts against its own bucket)."""
    blamed: list[tuple[str, ...] | None] = [None] * len(cases)
    per_call = spec.oracle.command is not None and spec.oracle.protocol == "call"
    if oracle is None or per_call:  # a process per answer: too slow to ask this often
        return blamed
    failing = [
        i for i, ok in enumerate(passed) if not ok and cases[i].rules and answers[i].error is None
    ]
    found = explain_all(
        oracle,
        [(cases[i].input, cases[i].rules, answers[i].answer) for i in failing],
        spec.comparator,
    )
    for i, rules in zip(failing, found, strict=True):
        blamed[i] = rules
    return blamed


def _metrics(
    cases: tuple[CaseRow, ...],
    passed: list[bool],
    blamed: Sequence[tuple[str, ...] | None] | None = None,
) -> dict[str, float]:
    """Pass rates overall and per bucket; a failing case whose answer switching explains by
    other rules than its bucket's does not count against its bucket."""
    total, good = Counter[str](), Counter[str]()
    for i, (row, ok) in enumerate(zip(cases, passed, strict=True)):
        rules = blamed[i] if blamed is not None else None
        total[row.bucket] += 1
        good[row.bucket] += ok or (rules is not None and row.bucket not in rules)
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


TIME_LIMITED = "not graded within the grading time limit"
MAX_CHUNK = 256


def _answered_within(
    session: Session, inputs: list[Any], seconds: float
) -> tuple[CandidateRun, int]:
    """The candidate's answers to ``inputs``, asked in chunks small enough that even cases
    that each take their whole limit end by the overall limit; the cases not reached by then
    fail with :data:`TIME_LIMITED`. Returns the run and how many cases were graded."""
    deadline = now() + seconds
    per_case = max(session.candidate.case_timeout, 0.001)
    answers: list[CaseAnswer] = []
    spent, workers = 0.0, 0
    while len(answers) < len(inputs):
        left = deadline - now()
        if left <= 0:
            break
        size = max(1, min(MAX_CHUNK, int(left / per_case)))
        start = len(answers)
        run = _answered(session, inputs[start : start + size])
        answers += [replace(a, index=a.index + start) for a in run.answers]
        spent += run.seconds
        workers = run.workers
    graded = len(answers)
    answers += [CaseAnswer(i, error=TIME_LIMITED) for i in range(graded, len(inputs))]
    return CandidateRun(tuple(answers), workers, spent), graded


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
        shrunk = shrink(row.input, spec.parts, disagrees, max_tries=spec.minimise_calls)
        final = _answered(session, [shrunk.case]).answers[0]
        involved = oracle.rules_of(shrunk.case)
        breaks = None
        if final.error is None:
            breaks = explain(oracle, shrunk.case, involved, final.answer, spec.comparator)
        found.append(
            Counterexample.bounded(
                case=row.id,
                bucket=row.bucket,
                rules=breaks if breaks is not None else involved,
                label="breaks" if breaks is not None or not involved else "involves",
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
