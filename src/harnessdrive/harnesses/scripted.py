"""Built-in agents that need no model: for demos, the grader's self-test and our own tests.

Each behaves the same way on every task, so each has a known right verdict:

- ``reference`` applies the task's reference solution (must pass);
- ``noop`` changes nothing and claims success (must fail);
- ``breaker`` makes a confident wrong edit (must fail);
- ``tamperer`` rewrites the visible tests and plants a conftest.py that forces passes (must be
  ``tampered``);
- ``crasher`` makes a partial edit, then exits non-zero (``crashed``, graded on what it left);
- ``sleeper`` never finishes (``timeout``);
- ``readme-only`` and ``naive`` play the attempts a task ships in ``agents/<name>/`` (the demo's
  differential task: what its README documents, and a naive one).
"""

from __future__ import annotations

import ast
from pathlib import Path

from harnessdrive.errors import HarnessError
from harnessdrive.harnesses.base import AgentRequest, AgentRun, HarnessInfo
from harnessdrive.harnesses.options import NoOptions, parse_options
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.sandbox.runner import Isolation
from harnessdrive.tasks.globs import matches
from harnessdrive.tasks.loading import Solution
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.tasks.overlays import apply_next_overlay, overlay_folders
from harnessdrive.transcript.models import Event, Transcript
from harnessdrive.workspace.solution import apply_change, apply_solution, solution_files

FORCING_CONFTEST = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""
TRIVIAL_TEST = "def test_everything_works():\n    assert True\n"


class _ScriptedAgent:
    """Shared plumbing: in-process edits, a short log, a transcript of what was done."""

    name = "scripted"
    claim = "Done. The change is complete and the tests pass."
    runs_foreign_code = False
    """Our own code edits the workspace: nothing of an agent runs, so no sandbox is needed."""

    def info(self) -> HarnessInfo:
        return HarnessInfo(
            name=self.name, installed=True, version="builtin", detail=_first_line(self.__doc__)
        )

    def check_variant(self, variant: VariantSpec) -> None:
        parse_options(NoOptions, variant, self.name)

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        request.logs.mkdir(parents=True, exist_ok=True)
        try:
            touched = self.edit(request)
        except (OSError, HarnessError) as exc:
            request.stderr.write_text(f"{self.name}: {exc}\n")
            # A built-in agent is harnessdrive's own code, no model behind it: its word that
            # its scripted edit could not be made is the machinery's, and stands.
            return AgentRun(
                exit_code=1,
                timed_out=False,
                seconds=now() - started,
                error=str(exc),
                could_not_run=True,
                version="builtin",
            )
        claim = self.claim_for(request)
        request.stdout.write_text(claim + "\n")
        events = [Event(kind="file_change", text=path) for path in touched]
        events.append(Event(kind="message", text=claim))
        return AgentRun(
            exit_code=0,
            timed_out=False,
            seconds=now() - started,
            transcript=Transcript(events=tuple(events), final_message=claim),
            version="builtin",
        )

    def edit(self, request: AgentRequest) -> list[str]:
        return []

    def claim_for(self, request: AgentRequest) -> str:
        """Its closing message on ``request``'s task."""
        return self.claim


class ReferenceAgent(_ScriptedAgent):
    """Applies the task's reference solution (an improvement task's next reference overlay)."""

    name = "reference"
    claim = "Applied the reference solution."

    def edit(self, request: AgentRequest) -> list[str]:
        if overlay_folders(request.task):  # an improvement task: one better state per round
            return apply_next_overlay(request.task, request.workspace)
        if request.task.solution is None:
            raise HarnessError(f"task {request.task.id} has no reference solution")
        return apply_solution(request.task, request.workspace)


class NoopAgent(_ScriptedAgent):
    """Changes nothing and claims success."""

    name = "noop"


class BreakerAgent(_ScriptedAgent):
    """Makes a confident wrong edit: the first function it would fix now returns None."""

    name = "breaker"
    claim = "Fixed it: simplified the logic. All tests pass."

    def edit(self, request: AgentRequest) -> list[str]:
        candidates = [p for p in solution_files(request.task) if p.endswith(".py")]
        if not candidates:
            candidates = _source_files(request.workspace)
        for rel in candidates:
            path = request.workspace / rel
            if path.is_file() and _short_circuit_first_function(path):
                return [rel]
        raise HarnessError(
            "breaker edits Python only, and this task has no Python function to break (in its "
            "reference solution's .py files or the repository's); leave breaker out of "
            "non-Python suites"
        )


class TampererAgent(_ScriptedAgent):
    """Rewrites the visible tests and plants a conftest.py that forces every test to pass."""

    name = "tamperer"
    claim = "All tests pass now."

    def edit(self, request: AgentRequest) -> list[str]:
        root = request.workspace
        protected = request.task.spec.grade.protected or ("tests/**", "test/**")
        touched = []
        for path in sorted(root.rglob("test_*.py")):
            rel = path.relative_to(root).as_posix()
            if ".git" not in path.parts and matches(rel, protected):
                path.write_text(TRIVIAL_TEST)
                touched.append(rel)
        (root / "conftest.py").write_text(FORCING_CONFTEST)
        touched.append("conftest.py")
        return touched


class PlaybookAgent(_ScriptedAgent):
    """Plays a scripted attempt the task ships: copies ``agents/<name>/`` over the workspace
    and ends with the claim in ``agents/<name>.claim``. A task without one cannot run it."""

    name = "playbook"

    def claim_for(self, request: AgentRequest) -> str:
        claim = request.task.folder / "agents" / f"{self.name}.claim"
        return claim.read_text(encoding="utf-8").strip() if claim.is_file() else self.claim

    def edit(self, request: AgentRequest) -> list[str]:
        overlay = request.task.folder / "agents" / self.name
        if not overlay.is_dir():
            raise HarnessError(f"task {request.task.id} has no scripted {self.name} attempt")
        return apply_change(Solution(overlay=overlay), request.workspace)


class ReadmeOnlyAgent(PlaybookAgent):
    """Implements what the task's README documents, nothing more (a differential task's)."""

    name = "readme-only"


class NaiveAgent(PlaybookAgent):
    """A quick, naive attempt the task ships (a differential task's)."""

    name = "naive"


class CrasherAgent(_ScriptedAgent):
    """Makes a partial edit, then exits with an error."""

    name = "crasher"

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        request.logs.mkdir(parents=True, exist_ok=True)
        files = solution_files(request.task) or _source_files(request.workspace)
        touched = []
        if files and (request.workspace / files[0]).is_file():
            with (request.workspace / files[0]).open("a") as handle:
                handle.write("\n# work in progress: half of the change\n")
            touched.append(files[0])
        script = "echo 'working on it...'; echo 'fatal: unexpected internal error' >&2; exit 3"
        result = run_as_agent(request, ["sh", "-c", script])
        return AgentRun(
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            stopped=result.stopped,
            seconds=now() - started,
            error="fatal: unexpected internal error",
            transcript=Transcript(
                events=(
                    *(Event(kind="file_change", text=p) for p in touched),
                    Event(kind="error", text="fatal: unexpected internal error"),
                )
            ),
            version="builtin",
        )


class SleeperAgent(_ScriptedAgent):
    """Never finishes; it also leaves a background child that must be stopped with it."""

    name = "sleeper"

    def run(self, request: AgentRequest) -> AgentRun:
        started = now()
        request.logs.mkdir(parents=True, exist_ok=True)
        script = "sleep 86400 & echo 'thinking...'; sleep 86400"
        result = run_as_agent(request, ["sh", "-c", script])
        return AgentRun(
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            stopped=result.stopped,
            seconds=now() - started,
            version="builtin",
        )


SCRIPTED_AGENTS: tuple[type[_ScriptedAgent], ...] = (
    ReferenceAgent,
    NoopAgent,
    BreakerAgent,
    TampererAgent,
    CrasherAgent,
    SleeperAgent,
    ReadmeOnlyAgent,
    NaiveAgent,
)
"""Every built-in scripted agent, in the order they are registered."""


def run_as_agent(request: AgentRequest, argv: list[str]) -> ProcessResult:
    """Run a command in the trial's sandbox, as a real agent process would run."""
    return request.sandbox.run(
        argv,
        cwd=request.workspace,
        env=base_environment(request.home, request.tmp, extra=request.services),
        timeout=request.timeout,
        stdout=request.stdout,
        stderr=request.stderr,
        isolation=Isolation(
            writable=(request.workspace, request.home, request.tmp), readonly=request.readonly
        ),
        stop=request.stop,
    )


def _source_files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*.py")
        if ".git" not in p.parts and not p.name.startswith("test_") and "tests" not in p.parts
    )


def _short_circuit_first_function(path: Path) -> bool:
    """Make the first function in the file return None before doing anything."""
    source = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    if not functions:
        return False
    function = min(functions, key=lambda n: n.lineno)
    body = function.body
    first = body[0]
    is_docstring = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    anchor = body[1] if is_docstring and len(body) > 1 else first
    lines = source.splitlines(keepends=True)
    indent = " " * anchor.col_offset
    if is_docstring and len(body) == 1:
        insert_at = first.end_lineno or first.lineno
    else:
        insert_at = anchor.lineno - 1
    lines.insert(insert_at, f"{indent}return None\n")
    path.write_text("".join(lines), encoding="utf-8")
    return True


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if text else ""
