"""``check``'s baselines of a differential task: proof that its grader measures what it says.

Two of them are changes of the repository, graded by ``check`` as trials on its executor like
every other case (checking/suite.py), and read here from their verdicts; the rest probe the
oracle and its plumbing, which no change of the repository can do, and run here directly:

- ``oracle-wrapper``: a candidate that forwards every case to the oracle server scores 100%
  when the server runs and its sandbox may reach it (the plumbing works) and 0% in grading's
  sandbox with no server (the no-oracle rule holds);
- ``rule-off:<rule>``: the oracle with one rule switched off scores 0 on that rule's bucket
  (the tags and frozen answers agree with the oracle);
- ``starter`` (a trial): the untouched repository scores at most ``starter_score`` (default 0);
- ``naive`` (a trial): the task's naive attempt (``agents/naive/``), when it ships one, scores
  low.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessdrive.grading.differential.casesets import CaseRow, read_case_set
from harnessdrive.grading.differential.compare import same
from harnessdrive.grading.differential.execute import Candidate, CaseAnswer, run_cases
from harnessdrive.grading.differential.oracle import Oracle
from harnessdrive.grading.differential.service import URL_VARIABLE, AgentRunWatch, oracle_server
from harnessdrive.grading.differential.spec import DifferentialGradeSpec
from harnessdrive.grading.differential.task_server import start_task_server
from harnessdrive.grading.verdict import Verdict
from harnessdrive.sandbox.runner import Sandbox, SandboxKind, get_sandbox
from harnessdrive.tasks.loading import Suite, Task

NAIVE_AT_MOST = 0.5
WRAPPER_MODULE = "harnessdrive_oracle_wrapper"
WRAPPER = '''"""Forwards each case to the oracle server: a baseline, never a solution."""
import json, os, urllib.request


def answer(case):
    url = os.environ.get("HARNESSDRIVE_ORACLE_URL", "http://127.0.0.1:9/")
    data = json.dumps(case).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=5) as reply:
        return json.loads(reply.read())
'''


@dataclass(frozen=True)
class Baseline:
    name: str
    expected: str
    score: float
    ok: bool


def differential_baselines(
    task: Task, *, sandbox: Sandbox, python: str, scratch: Path | None = None
) -> list[Baseline]:
    """The oracle's baselines of ``task`` (a differential task), measured: the wrapper with
    and without the oracle, and each rule switched off."""
    spec = task.spec.grade
    assert isinstance(spec, DifferentialGradeSpec)
    cases = read_case_set(task.folder / spec.cases, spec).rows
    with _scratch(scratch) as work:
        return [
            *_wrapper(task, spec, cases, sandbox, python, work),
            *_rules_off(task, spec, cases),
        ]


def naive_attempt(task: Task) -> bool:
    """Whether ``task`` is a differential task that ships a naive attempt to grade."""
    return (
        isinstance(task.spec.grade, DifferentialGradeSpec)
        and (task.folder / "agents" / "naive").is_dir()
    )


def graded_baselines(task: Task, starter: Verdict, naive: Verdict | None) -> list[Baseline]:
    """The baselines read from trials' verdicts: the untouched repository's (``starter``) and
    the naive attempt's, when the task ships one; none for a task of another kind."""
    spec = task.spec.grade
    if not isinstance(spec, DifferentialGradeSpec):
        return []
    ceiling = spec.starter_score  # a starter may be a partial implementation
    score = _scored(starter)
    found = [
        Baseline("starter", f"at most {ceiling:.0%}" if ceiling else "0%", score, score <= ceiling)
    ]
    if naive is not None:
        score = _scored(naive)
        found.append(
            Baseline("naive", f"at most {NAIVE_AT_MOST:.0%}", score, score <= NAIVE_AT_MOST)
        )
    return found


def _scored(verdict: Verdict) -> float:
    """A verdict's score; one never graded scores 1, so its baseline fails and says so."""
    if verdict.outcome in ("pass", "fail") and verdict.score is not None:
        return verdict.score
    return 1.0 if verdict.outcome != "fail" else 0.0


def _wrapper(
    task: Task,
    spec: DifferentialGradeSpec,
    cases: tuple[CaseRow, ...],
    sandbox: Sandbox,
    python: str,
    work: Path,
) -> list[Baseline]:
    root = work / "wrapper"
    root.mkdir()
    (root / f"{WRAPPER_MODULE}.py").write_text(WRAPPER, encoding="utf-8")
    inputs = [row.input for row in cases]

    def candidate(label: str, url: str | None) -> Candidate:
        return Candidate(
            sandbox=sandbox,
            python=python,
            root=root,
            module=WRAPPER_MODULE,
            function="answer",
            work=work / label,
            home=_folder(work / f"{label}-home"),
            tmp=_folder(work / f"{label}-tmp"),
            case_timeout=spec.case_timeout,
            network="loopback" if url else "none",
            env={URL_VARIABLE: url} if url else {},
            allowed=None,  # no run-time guard: the sandbox alone must keep the oracle out
        )

    with _served(task, spec) as url:
        with_access = _score(cases, run_cases(candidate("with", url), inputs).answers, spec)
    without = _score(cases, run_cases(candidate("without", None), inputs).answers, spec)
    return [
        Baseline("oracle-wrapper, oracle reachable", "100%", with_access, with_access == 1.0),
        Baseline("oracle-wrapper, as graded", "0%", without, without == 0.0),
    ]


@contextmanager
def _served(task: Task, spec: DifferentialGradeSpec) -> Iterator[str]:
    """The oracle served as the agent's run has it: the task's own server when it has one."""
    if spec.oracle.server is not None:
        own = start_task_server(task.folder, spec.oracle)
        try:
            yield own.url  # one that never listened: the wrapper scores 0 and the check says so
        finally:
            own.stop()
        return
    oracle = Oracle(task.folder, spec.oracle)
    server = oracle_server(oracle, AgentRunWatch())
    thread = threading.Thread(target=server.serve_forever, name="oracle", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        oracle.close()


def _rules_off(
    task: Task, spec: DifferentialGradeSpec, cases: tuple[CaseRow, ...]
) -> list[Baseline]:
    oracle = Oracle(task.folder, spec.oracle)
    found = []
    try:
        oracle.prefetch(
            [(row.input, (row.bucket,)) for row in cases if row.bucket in spec.oracle.rules]
        )
        for rule in spec.oracle.rules:
            bucket = [row for row in cases if row.bucket == rule]
            good = sum(
                same(row.expected, oracle.answer(row.input, {rule}), spec.comparator)
                for row in bucket
            )
            score = good / len(bucket) if bucket else 1.0
            found.append(Baseline(f"rule {rule} off, on its bucket", "0%", score, score == 0.0))
    finally:
        oracle.close()
    return found


def _score(
    cases: tuple[CaseRow, ...], answers: tuple[CaseAnswer, ...], spec: DifferentialGradeSpec
) -> float:
    good = sum(
        a.error is None and same(row.expected, a.answer, spec.comparator)
        for row, a in zip(cases, answers, strict=True)
    )
    return good / len(cases)


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def _scratch(folder: Path | None) -> Iterator[Path]:
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        yield folder
        return
    with tempfile.TemporaryDirectory(prefix="harnessdrive-baselines-") as made:
        yield Path(made)


def baselines_json(baselines: dict[str, list[Baseline]]) -> list[dict[str, Any]]:
    """Every task's baselines as JSON rows: what each must score, what it scored, ok."""
    return [
        {"task": task, "baseline": b.name, "expected": b.expected, "score": b.score, "ok": b.ok}
        for task, found in baselines.items()
        for b in found
    ]


def suite_baselines(
    suite: Suite, *, sandbox: SandboxKind, python: str
) -> dict[str, list[Baseline]]:
    """The oracle's baselines of every differential task of ``suite``, by task id."""
    tasks = [t for t in suite.tasks if isinstance(t.spec.grade, DifferentialGradeSpec)]
    if not tasks:
        return {}
    runner = get_sandbox(sandbox, hidden=[suite.folder, *(t.folder for t in tasks)])
    return {t.id: differential_baselines(t, sandbox=runner, python=python) for t in tasks}
