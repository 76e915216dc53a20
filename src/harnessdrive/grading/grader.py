"""The one grader: turns an agent's change into a Verdict in a clean grading copy.

The grading copy is a NEW copy of the base state, plus the agent's change minus protected,
restored and hidden paths, plus the hidden files. The agent never touched it. The visible command
runs first, then the hidden files are injected and the test command decides.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from harnessdrive.errors import GradingError, HarnessdriveError, SetupFailedError
from harnessdrive.grading.guarded import (
    install_launcher,
    own_modules,
    plant_canaries,
    prepare_run,
    read_counts,
)
from harnessdrive.grading.scope import scope_findings
from harnessdrive.grading.tamper import find_tampering, needs_content
from harnessdrive.grading.verdict import (
    Finding,
    GradingRun,
    Outcome,
    SetupRun,
    StreamKept,
    Verdict,
)
from harnessdrive.grading.witness import WitnessPlan
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.commands import placeholders, render, shell_argv
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import Isolation, Sandbox
from harnessdrive.tasks.globs import matches
from harnessdrive.tasks.loading import Task
from harnessdrive.tasks.view import TaskView, task_view
from harnessdrive.workspace.changes import Changes, FileChange
from harnessdrive.workspace.materialize import (
    apply_changes,
    copy_snapshot,
    remove_entry,
    write_file,
)
from harnessdrive.workspace.setup import SetupOutcome, run_setup
from harnessdrive.workspace.setup_reuse import SetupStates, reuse_setup
from harnessdrive.workspace.snapshot import Snapshot, read_blobs

_PYTEST = re.compile(r"(^|[\s/;&|(])(py\.?test|-m\s+pytest)\b")
DEPENDENCY_NAMES = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements*.txt",
    "package.json",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "uv.lock",
    "poetry.lock",
    "Pipfile",
    "Pipfile.lock",
    "go.mod",
    "go.sum",
    "Cargo.toml",
    "Cargo.lock",
    "Gemfile",
    "Gemfile.lock",
)


@dataclass(frozen=True)
class GradingSetup:
    """Everything the grader needs besides the change itself."""

    task: Task
    snapshot: Snapshot
    scratch: Path
    """A folder of our own where the grading copy is made (removed afterwards)."""
    logs: Path
    """Where logs and junit reports go; outside the grading copy."""
    sandbox: Sandbox
    python: str
    stop: StopToken | None = None
    keep_copy: bool = False
    run_visible: bool = True
    """False skips the visible command: its counts never decide the outcome."""
    readonly: tuple[Path, ...] = ()
    """Paths the setup and test commands may read beyond the task's own view (tasks/view.py)."""
    setup_states: SetupStates | None = None
    """Setup results to reuse (workspace/setup_reuse.py); None runs setup in every copy."""


def grade(setup: GradingSetup, changes: Changes) -> Verdict:
    """Judge ``changes``. Raises :class:`GradingError` when it cannot evaluate."""
    started = now()
    spec = setup.task.spec.grade
    hidden_targets = tuple(item.target for item in setup.task.hidden)
    included, excluded = _split(changes, spec.protected, spec.restored, hidden_targets)
    wanted = {c.new_blob for c in changes.files if c.new_blob and needs_content(c)}
    findings = tuple(
        find_tampering(
            changes,
            protected=spec.protected,
            new_content=read_blobs(setup.snapshot.root, wanted, git_dir=setup.snapshot.shadow),
            read_base=lambda path: _read_base(setup.snapshot, path),
        )
    ) + tuple(scope_findings(changes, spec.scope, exempt=(*spec.protected, *spec.restored)))
    setup.logs.mkdir(parents=True, exist_ok=True)
    visible = None
    if spec.visible_command and setup.run_visible:
        # The visible run executes the agent's code, which may write into its copy or HOME (a
        # conftest.py, a usercustomize): it gets copies of its own, never the deciding run's.
        visible = _run_visible(replace(setup, scratch=setup.scratch / "visible"), included)
    copy = setup.scratch / "grading-copy"
    try:
        copy_snapshot(setup.snapshot, copy)
        apply_changes(setup.snapshot, copy, included)
        verdict = _run_tests(setup, copy, findings, excluded, included, visible)
    finally:
        if not setup.keep_copy:
            shutil.rmtree(copy, ignore_errors=True)
    return verdict.model_copy(update={"seconds": round(now() - started, 3)})


def _run_visible(setup: GradingSetup, included: list[FileChange]) -> GradingRun | None:
    """The visible command in a copy of its own; None when setup fails there (the deciding run
    reports that failure)."""
    spec = setup.task.spec.grade
    assert spec.visible_command is not None
    copy = setup.scratch / "grading-copy"
    setup.scratch.mkdir(parents=True, exist_ok=True)
    try:
        copy_snapshot(setup.snapshot, copy)
        apply_changes(setup.snapshot, copy, included)
        prepared = _prepare(setup, copy, included, "grade-setup-visible.log")
        if isinstance(prepared, _SetupFailed):
            return None
        run, _ = _run_command(
            setup, copy, spec.visible_command, "visible", prepared.env, prepared.isolation
        )
        return run
    finally:
        shutil.rmtree(setup.scratch, ignore_errors=True)


@dataclass(frozen=True)
class _Prepared:
    env: dict[str, str]
    isolation: Isolation
    view: TaskView
    setup_run: SetupRun | None


@dataclass(frozen=True)
class _SetupFailed:
    setup_run: SetupRun


def _prepare(
    setup: GradingSetup, copy: Path, included: list[FileChange], log_name: str
) -> _Prepared | _SetupFailed:
    """Private HOME and tmp, the sandbox's view and the task's setup, for one grading copy.
    A setup failure after the agent changed a dependency file is the agent's; any other raises."""
    home = setup.scratch / "grading-home"
    tmp = setup.scratch / "grading-tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    outputs = setup.scratch / "grading-out"
    outputs.mkdir(exist_ok=True)
    env = base_environment(home, tmp)
    view = task_view(setup.task, setup.python)
    # Logs reach the results folder through inherited descriptors; the junit report is written
    # to ``outputs``, outside the copy, and copied to the results folder once the run is over.
    runner_folder = install_launcher(setup.scratch)
    isolation = Isolation(
        writable=(copy, home, tmp, outputs),
        readonly=(*view.readonly, *setup.readonly, runner_folder),
        network="none",
    )
    setup_run = None
    setup_log = setup.logs / log_name
    changed_dependencies = any(matches(change.path, DEPENDENCY_NAMES) for change in included)
    if setup.task.spec.setup.commands:

        def run_in(root: Path, setup_home: Path, log: Path) -> SetupOutcome:
            return run_setup(
                setup.task.spec.setup.commands,
                root=root,
                sandbox=setup.sandbox,
                env=base_environment(setup_home, tmp),
                timeout=setup.task.spec.setup.timeout,
                log=log,
                isolation=replace(
                    isolation,
                    writable=(root, setup_home, tmp, outputs),
                    network=setup.task.spec.setup.network,
                ),
                values=view.values(root),
                stop=setup.stop,
            )

        outcome = reuse_setup(
            setup.setup_states,
            setup.task,
            setup.snapshot,
            copy,
            python=setup.python,
            home=home,
            log=setup_log,
            run=run_in,
            same_dependencies=not changed_dependencies,
        )
        setup_run = SetupRun(
            commands=outcome.commands,
            exit_code=outcome.exit_code,
            timed_out=outcome.timed_out,
            seconds=round(outcome.seconds, 3),
        )
        if outcome.stopped:
            raise GradingError("stopped during setup")
        if not outcome.ok:
            if changed_dependencies:
                return _SetupFailed(setup_run)
            raise SetupFailedError(f"setup failed in the grading copy (see {setup_log})")
    return _Prepared(env, isolation, view, setup_run)


def _run_tests(
    setup: GradingSetup,
    copy: Path,
    findings: tuple[Finding, ...],
    excluded: tuple[str, ...],
    included: list[FileChange],
    visible: GradingRun | None,
) -> Verdict:
    spec = setup.task.spec.grade
    prepared = _prepare(setup, copy, included, "grade-setup.log")
    if isinstance(prepared, _SetupFailed):
        return Verdict(
            outcome="fail",
            visible=visible,
            findings=findings,
            excluded_paths=excluded,
            setup=prepared.setup_run,
            error="setup failed after the agent changed a dependency file",
        )
    env, isolation, view, setup_run = (
        prepared.env,
        prepared.isolation,
        prepared.view,
        prepared.setup_run,
    )
    # Canaries of known outcome go into the hidden test files: the witness of an honest run.
    canaries = plant_canaries(setup.task, view.values(copy))
    injected = tuple(
        write_file(copy, item.target, canaries.contents[item.target]) for item in setup.task.hidden
    )
    for path in spec.removed:
        remove_entry(copy, path)
    # Read-only inside the sandbox: code under test cannot rewrite the hidden tests as it runs.
    with_hidden = replace(isolation, readonly=(*isolation.readonly, *injected))
    hidden, witnessed = _run_command(
        setup, copy, spec.command, "tests", env, with_hidden, canaries.plan
    )
    findings = (*findings, *witnessed)
    tampered = any(finding.tampers for finding in findings)
    verdict: Outcome = "tampered" if tampered else "pass" if hidden.succeeded else "fail"
    return Verdict(
        outcome=verdict,
        visible=visible,
        hidden=hidden,
        findings=findings,
        excluded_paths=excluded,
        setup=setup_run,
    )


def _run_command(
    setup: GradingSetup,
    copy: Path,
    template: str,
    label: str,
    env: dict[str, str],
    isolation: Isolation,
    plan: WitnessPlan | None = None,
) -> tuple[GradingRun, tuple[Finding, ...]]:
    spec = setup.task.spec.grade
    outputs = setup.scratch / "grading-out"
    junit_path = outputs / f"junit-{label}.xml"
    junit_path.unlink(missing_ok=True)
    recorded_junit = setup.logs / junit_path.name
    recorded_junit.unlink(missing_ok=True)
    log = setup.logs / f"grade-{label}.log"
    values = {"python": setup.python, "workspace": str(copy), "junit": str(junit_path)}
    command = render(template, values)
    prepared = prepare_run(
        command,
        setup.scratch,
        python=setup.python,
        junit=junit_path,
        copy=copy,
        own=own_modules(setup.snapshot.root),
    )
    wants_junit = spec.junit and (
        "junit" in placeholders(template) or _PYTEST.search(command) or prepared.writes_junit
    )
    run_env = {**env, **prepared.env}
    # Bytecode from an earlier run must never stand in for a rewritten file (seed 000): with no
    # cache prefix, the copy's bytecode lives only in its own __pycache__ folders, removed here.
    # What lies outside the copy (the interpreter, shared environments) is read-only to every
    # command and keeps its bytecode.
    _remove_pycache(copy)
    if wants_junit and "junit" not in placeholders(template):
        run_env["PYTEST_ADDOPTS"] = (
            f"--junitxml={junit_path} -o junit_family=xunit2 -p no:cacheprovider"
        )
    with log.open("wb") as handle:
        handle.write(f"$ {command}\n# run as: {prepared.command}\n".encode())
    result = setup.sandbox.run(
        shell_argv(prepared.command),
        cwd=copy,
        env=run_env,
        timeout=spec.timeout,
        stdout=log,
        stderr=log,
        isolation=isolation,
        stop=setup.stop,
    )
    if result.stopped:
        raise GradingError(f"stopped while running the {label} command")
    limit_note = f"stopped at the {result.limit.replace('_', ' ')} limit" if result.limit else None
    base = {
        "command": command,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "seconds": round(result.seconds, 3),
        "output": StreamKept.of(result.stdout_record),
    }
    if wants_junit:
        if junit_path.is_file() and not junit_path.is_symlink():
            shutil.copyfile(junit_path, recorded_junit)
            return read_counts(
                recorded_junit,
                base,
                prepared=prepared,
                plan=plan,
                copy=copy,
                note=limit_note,
            )
        note = limit_note or "no junit report was written, so the run cannot count as passed"
        return GradingRun(**base, passed=0, total=0, source="junit", note=note), ()
    passed = int(result.ok)
    return GradingRun(
        **base, passed=passed, total=1, failed=1 - passed, source="exit_code", note=limit_note
    ), ()


def _split(
    changes: Changes,
    protected: tuple[str, ...],
    restored: tuple[str, ...],
    hidden_targets: tuple[str, ...],
) -> tuple[list[FileChange], tuple[str, ...]]:
    included: list[FileChange] = []
    excluded: list[str] = []
    for change in changes.files:
        if (
            (protected and matches(change.path, protected))
            or (restored and matches(change.path, restored))
            or change.path in hidden_targets
        ):
            excluded.append(change.path)
        else:
            included.append(change)
    return included, tuple(excluded)


def _remove_pycache(root: Path) -> None:
    for dirpath, dirnames, _ in os.walk(root):
        if "__pycache__" in dirnames:
            shutil.rmtree(Path(dirpath) / "__pycache__", ignore_errors=True)
            dirnames.remove("__pycache__")
        if ".git" in dirnames:
            dirnames.remove(".git")


def _read_base(snapshot: Snapshot, path: str) -> bytes | None:
    target = snapshot.root / path
    if target.is_symlink() or not target.is_file():
        return None
    try:
        return target.read_bytes()
    except OSError as exc:
        raise HarnessdriveError(f"cannot read the base copy of {path}: {exc}") from exc
