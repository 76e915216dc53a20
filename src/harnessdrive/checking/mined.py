"""What ``check`` asks of a mined task beyond the usual cases.

**A change to code.** Mining records whether the commit changed code or only tests, comments
and docstrings (``metadata.change_kind``, mining/change_kind.py); one that left the code as it
was cannot be a task for fixing code, so ``check`` finds the task invalid.

**The reference rewritten (checking/reshape.py) must pass too.**
A mined task comes with its commit's change as the only right answer; seed tasks bring a
correct rewrite of their own as a fixture (``selftest/rewritten``), a mined one does not. So
``check`` makes one: :class:`RewriteAgent` applies the reference in the trial's workspace and
rewrites the Python it changed (new formatting, renamed locals, an extracted helper, swapped
branches), and the case is graded like any fixture that must pass. Hidden tests that fail it
accept only the reference's exact shape, which no agent can be expected to reproduce.
"""

from __future__ import annotations

from pathlib import Path

from harnessdrive.checking.cases import CheckCase
from harnessdrive.checking.reshape import NoReshape, reshape_module
from harnessdrive.grading.verdict import Verdict
from harnessdrive.harnesses.base import AgentRequest, AgentRun, HarnessInfo
from harnessdrive.harnesses.options import NoOptions, parse_options
from harnessdrive.sandbox.clock import now
from harnessdrive.store.results import DiffStats
from harnessdrive.tasks.loading import Task
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.transcript.models import Event, Transcript
from harnessdrive.workspace.solution import apply_solution, solution_files

REWRITTEN = "rewritten"
"""The case's name, and the name of a declared fixture that takes its place."""
REWRITE_LOG = "rewrite.txt"
"""What the agent rewrote, one line per function, in the case's logs."""
NO_REWRITE = "no rewrite: "
DIFF_FILE = "diff.patch"
"""The trial's record of the change it graded."""
_MAX_NAMED = 5


_NOT_CODE = {
    "comments-only": "changes only comments, docstrings or layout besides the tests",
    "tests-only": "changes only tests and documentation",
}


def change_problems(task: Task) -> list[str]:
    """The task's problem when mining found that its commit changed no code."""
    kind = task.spec.metadata.get("change_kind") if task.spec.metadata.get("mined") else None
    if not isinstance(kind, str) or kind not in _NOT_CODE:
        return []
    return [
        f"the mined commit {_NOT_CODE[kind]} (metadata.change_kind = {kind!r}): a change that "
        "leaves the code as it was cannot be a task for fixing code"
    ]


def wants_rewrite(task: Task) -> bool:
    """A mined task with a reference and no correct rewrite of its own among its fixtures."""
    return (
        task.spec.metadata.get("mined") is True
        and task.solution is not None
        and task.spec.improve is None
        and all(fixture.name != REWRITTEN for fixture in task.fixtures)
    )


class RewriteAgent:
    """Applies the reference solution, then rewrites its Python with the meaning kept."""

    name = "rewrite"
    runs_foreign_code = False

    def info(self) -> HarnessInfo:
        return HarnessInfo(
            name=self.name, installed=True, version="builtin", detail=self.__doc__ or ""
        )

    def check_variant(self, variant: VariantSpec) -> None:
        parse_options(NoOptions, variant, self.name)

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        request.logs.mkdir(parents=True, exist_ok=True)
        try:
            done, skipped = _rewrite(request.task, request.workspace)
        except (OSError, ValueError) as exc:
            done, skipped = [], [f"cannot apply the reference: {exc}"]
        lines = done or skipped or ["the reference changes no Python file"]
        (request.logs / REWRITE_LOG).write_text("\n".join(lines) + "\n", encoding="utf-8")
        if not done:
            # Nothing to grade: the case is skipped, and the reasons say why.
            error = NO_REWRITE + "; ".join(lines)
            request.stderr.write_text(error + "\n")
            return AgentRun(
                exit_code=1,
                timed_out=False,
                seconds=now() - started,
                error=error,
                could_not_run=True,
                version="builtin",
            )
        request.stdout.write_text("\n".join(done) + "\n")
        return AgentRun(
            exit_code=0,
            timed_out=False,
            seconds=now() - started,
            transcript=Transcript(events=tuple(Event(kind="file_change", text=d) for d in done)),
            version="builtin",
        )


def _rewrite(task: Task, workspace: Path) -> tuple[list[str], list[str]]:
    """Apply the reference, then reshape each Python file it changed; what was done to each
    function, and why each file that was left as the reference has it."""
    python = [p for p in solution_files(task) if p.endswith(".py")]
    before = {p: _read(workspace / p) for p in python}
    apply_solution(task, workspace)
    done: list[str] = []
    skipped: list[str] = []
    for relative in python:
        path = workspace / relative
        after = _read(path)
        if after is None:
            continue  # deleted by the reference
        try:
            reshaped = reshape_module(before[relative], after)
        except NoReshape as exc:
            skipped.append(f"{relative}: {exc}")
            continue
        path.write_text(reshaped.text, encoding="utf-8")
        done.extend(f"{relative}: {change}" for change in reshaped.changes)
    return done, skipped


def _read(path: Path) -> str | None:
    if not path.is_file() or path.is_symlink():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def rewrite_case(
    verdict: Verdict, diff: DiffStats | None, logs: Path
) -> tuple[CheckCase | None, list[str], list[str]]:
    """The rewritten case as the self-test shows it, the task's problems it proves, and notes.

    A rewrite that could not be made is a note (the case is left out); one that does not pass
    is a problem: the hidden tests accept only the reference's exact shape."""
    error = verdict.error or ""
    if diff is None and NO_REWRITE in error:
        reason = error[error.index(NO_REWRITE) + len(NO_REWRITE) :].split("; the ")[0]
        return None, [], [f"no rewritten reference to check: {reason}"]
    what = _what_was_rewritten(logs)
    detail = _detail(verdict)
    case = CheckCase(
        REWRITTEN,
        "pass",
        verdict.outcome if diff is not None else "not_graded",
        detail,
        "fixture",
        files=diff.files_changed if diff else None,
        lines=diff.lines_changed if diff else None,
    )
    if case.outcome == "pass":
        return case, [], []
    problem = (
        "the hidden tests accept only the reference's exact shape: the reference rewritten with "
        f"its meaning kept ({what}) got {case.outcome}"
        + (f" ({detail})" if detail else "")
        + f"; the rewrite: {_change_file(logs)}"
    )
    return case, [problem], []


def _change_file(logs: Path) -> Path:
    """Where the trial kept the rewrite's diff (its logs folder when there is none)."""
    found = sorted(logs.rglob(DIFF_FILE))
    return found[0] if found else logs


def _what_was_rewritten(logs: Path) -> str:
    found = sorted(logs.rglob(REWRITE_LOG))
    try:
        lines = found[0].read_text(encoding="utf-8").splitlines() if found else []
    except OSError:
        lines = []
    shown = "; ".join(lines[:_MAX_NAMED])
    if len(lines) > _MAX_NAMED:
        shown += f"; and {len(lines) - _MAX_NAMED} more"
    return shown or "see its logs"


def _detail(verdict: Verdict) -> str:
    if verdict.error:
        return verdict.error
    run = verdict.hidden
    if run is None:
        return ""
    parts = [f"tests {run.passed}/{run.total}"]
    failing = [name for name, o in (run.hidden_outcomes or {}).items() if o != "passed"]
    if failing:
        parts.append("failing: " + ", ".join(failing[:_MAX_NAMED]))
        if len(failing) > _MAX_NAMED:
            parts.append(f"and {len(failing) - _MAX_NAMED} more")
    if verdict.findings:
        parts.append("findings: " + ", ".join(f.code for f in verdict.findings))
    return "; ".join(parts)
