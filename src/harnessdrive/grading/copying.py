"""The first step of grading, the same for every kind: check and split the change, then build
the grading copy (a fresh copy of the base state, the change carried in, setup, hidden files).

The copy is NEW: the agent never touched it. What the agent changed under a protected or
restored path, or at a hidden file's target, stays out; the hidden files go in after setup and
are read-only to the commands that run there.
"""

from __future__ import annotations

import functools
import re
import secrets
import shutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from harnessdrive.errors import GradingError, HarnessdriveError, SetupFailedError
from harnessdrive.grading.context import GradingSetup
from harnessdrive.grading.guarded import install_launcher
from harnessdrive.grading.kinds.base import GradingCopy
from harnessdrive.grading.scope import scope_findings
from harnessdrive.grading.tamper import find_tampering, needs_content
from harnessdrive.grading.verdict import Finding, SetupRun
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.runner import Isolation
from harnessdrive.tasks.globs import matches
from harnessdrive.tasks.view import task_view
from harnessdrive.workspace.changes import Changes, FileChange
from harnessdrive.workspace.materialize import apply_changes, copy_snapshot
from harnessdrive.workspace.placing import remove_entry, write_file
from harnessdrive.workspace.setup import SetupOutcome, run_setup
from harnessdrive.workspace.setup_reuse import reuse_setup
from harnessdrive.workspace.snapshot import Snapshot, read_blobs

DEPENDENCY_NAMES = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements*.txt",
    "requirements/*.txt",
    "tox.ini",
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
COPY_FOLDER = "grading-copy"
_LABEL = re.compile(r"[a-z0-9][a-z0-9_-]{0,40}")


@dataclass(frozen=True)
class SplitChange:
    """The agent's change, checked and split into what is graded and what stays out."""

    included: tuple[FileChange, ...]
    excluded: tuple[str, ...]
    """Changed paths not carried into the copy (protected, restored, hidden targets)."""
    findings: tuple[Finding, ...]
    """Tampering and scope findings of the change itself."""


@dataclass(frozen=True)
class SetupFailed:
    """The task's setup failed in the copy because of the agent's change (it changed a
    dependency file, or the same setup succeeds on the base state): the agent's failure, so
    there is nothing to grade."""

    setup_run: SetupRun
    reason: str = "setup failed after the agent changed a dependency file"


def split_change(setup: GradingSetup, changes: Changes) -> SplitChange:
    """Tamper and scope checks, and the split of the change by the task's ``[grade]`` paths."""
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
    return SplitChange(tuple(included), excluded, findings)


@contextmanager
def grading_copy(
    setup: GradingSetup, split: SplitChange, began: float
) -> Iterator[GradingCopy | SetupFailed]:
    """The deciding copy, ``<scratch>/<run>/grading-copy`` (``<run>`` named at random, see
    :func:`run_folder`): set up, hidden files injected and ``[grade] removed`` paths deleted.
    Removed afterwards unless ``keep_copy``. ``began``: when grading began
    (``sandbox.clock.now``)."""
    own = replace(setup, scratch=run_folder(setup.scratch))
    copy = own.scratch / COPY_FOLDER
    try:
        copy_snapshot(own.snapshot, copy)
        apply_changes(own.snapshot, copy, list(split.included))
        twin = functools.partial(twin_copy, setup, split, began) if setup.run_twin else None
        yield _built(own, split, copy, began, "grade-setup.log", hidden=True, twin=twin)
    finally:
        if not setup.keep_copy:
            shutil.rmtree(copy, ignore_errors=True)


def run_folder(scratch: Path) -> Path:
    """A new folder in ``scratch`` for one grading run's copy, HOME, tmp and outputs, named at
    random: the deciding copy and the twin's (:func:`twin_copy`) sit at paths of one shape, so
    that code under test cannot tell them apart by where it runs."""
    scratch.mkdir(parents=True, exist_ok=True)
    while True:
        folder = scratch / f"run-{secrets.token_hex(4)}"
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return folder


@contextmanager
def twin_copy(
    setup: GradingSetup, split: SplitChange, began: float
) -> Iterator[GradingCopy | None]:
    """Another deciding copy, built the same way (hidden files injected), in a folder of the
    same shape beside the deciding one (removed afterwards, whole), for the run of a twin
    (grading/twin_run.py); None when its setup fails where the deciding copy's did not."""
    own = replace(setup, scratch=run_folder(setup.scratch))
    copy = own.scratch / COPY_FOLDER
    try:
        copy_snapshot(own.snapshot, copy)
        apply_changes(own.snapshot, copy, list(split.included))
        built = _built(own, split, copy, began, "grade-setup-twin.log", hidden=True)
        yield None if isinstance(built, SetupFailed) else built
    finally:
        shutil.rmtree(own.scratch, ignore_errors=True)


@contextmanager
def fresh_copy(
    setup: GradingSetup, split: SplitChange, began: float, label: str
) -> Iterator[GradingCopy | None]:
    """A further copy without the hidden files in ``<scratch>/<label>`` (removed afterwards,
    whole); None when its setup fails after a dependency change."""
    if not _LABEL.fullmatch(label) or label.startswith("grading-"):
        # It would share a folder with the deciding copy (grading-copy, grading-home, ...).
        raise GradingError(f"a further grading copy cannot be called {label!r}")
    own = replace(setup, scratch=setup.scratch / label)
    own.scratch.mkdir(parents=True, exist_ok=True)
    copy = own.scratch / COPY_FOLDER
    try:
        copy_snapshot(own.snapshot, copy)
        apply_changes(own.snapshot, copy, list(split.included))
        built = _built(own, split, copy, began, f"grade-setup-{label}.log", hidden=False)
        yield None if isinstance(built, SetupFailed) else built
    finally:
        shutil.rmtree(own.scratch, ignore_errors=True)


def _built(
    setup: GradingSetup,
    split: SplitChange,
    copy: Path,
    began: float,
    log_name: str,
    *,
    hidden: bool,
    twin: Callable[[], AbstractContextManager[GradingCopy | None]] | None = None,
) -> GradingCopy | SetupFailed:
    """Private HOME and tmp, the sandbox's view and the task's setup for ``copy``; then the
    hidden files. A setup failure after the agent changed a dependency file is the agent's;
    any other raises."""
    home = setup.scratch / "grading-home"
    tmp = setup.scratch / "grading-tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    outputs = setup.scratch / "grading-out"
    outputs.mkdir(exist_ok=True)
    env = base_environment(home, tmp)
    view = task_view(setup.task, setup.python)
    # Logs reach the results folder through inherited descriptors; reports are written to
    # ``outputs``, outside the copy, and copied to the results folder once the run is over.
    runner_folder = install_launcher(setup.scratch)
    isolation = Isolation(
        writable=(copy, home, tmp, outputs),
        readonly=(*view.readonly, *setup.readonly, runner_folder),
        network="none",
    )
    setup_run = _run_task_setup(setup, split, copy, home, tmp, outputs, isolation, log_name)
    if isinstance(setup_run, SetupFailed):
        return setup_run
    injected: dict[str, Path] = {}
    if hidden:
        injected = {
            item.target: write_file(copy, item.target, item.source.read_bytes())
            for item in setup.task.hidden
        }
        for path in setup.task.spec.grade.removed:
            _remove(copy, path)
            injected.pop(path, None)
        # Read-only inside the sandbox: code under test cannot rewrite the hidden files.
        isolation = replace(isolation, readonly=(*isolation.readonly, *injected.values()))
    return GradingCopy(
        setup=setup,
        root=copy,
        scratch=setup.scratch,
        outputs=outputs,
        env=env,
        isolation=isolation,
        included=split.included,
        hidden=injected,
        findings=split.findings,
        setup_run=setup_run,
        began=began,
        fresh=functools.partial(fresh_copy, setup, split, began),
        twin=twin,
    )


def _run_task_setup(
    setup: GradingSetup,
    split: SplitChange,
    copy: Path,
    home: Path,
    tmp: Path,
    outputs: Path,
    isolation: Isolation,
    log_name: str,
) -> SetupRun | SetupFailed | None:
    commands = setup.task.spec.setup
    if not commands.commands:
        return None
    setup_log = setup.logs / log_name
    changed_dependencies = any(matches(change.path, DEPENDENCY_NAMES) for change in split.included)

    def run_in(root: Path, setup_home: Path, log: Path) -> SetupOutcome:
        return run_setup(
            commands.commands,
            root=root,
            sandbox=setup.sandbox,
            env=base_environment(setup_home, tmp),
            timeout=commands.timeout,
            log=log,
            isolation=replace(
                isolation,
                writable=(root, setup_home, tmp, outputs),
                network=commands.network,
            ),
            values=task_view(setup.task, setup.python).values(root),
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
            return SetupFailed(setup_run)
        if _base_sets_up(setup, run_in, log_name):
            return SetupFailed(
                setup_run, "setup failed with the agent's change; it succeeds on the base state"
            )
        raise SetupFailedError(f"setup failed in the grading copy (see {setup_log})")
    return setup_run


def _base_sets_up(
    setup: GradingSetup, run_in: Callable[[Path, Path, Path], SetupOutcome], log_name: str
) -> bool:
    """Whether the task's setup succeeds on a fresh copy of the base state, without the change:
    it tells a setup the agent's change broke (its fail) from one that is broken (not graded)."""
    base = setup.scratch / "grading-base"
    home = setup.scratch / "grading-base-home"
    try:
        copy_snapshot(setup.snapshot, base)
        home.mkdir(exist_ok=True)
        outcome = run_in(base, home, setup.logs / log_name.replace(".log", "-base.log"))
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    if outcome.stopped:
        raise GradingError("stopped during setup")
    return outcome.ok


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


def _remove(copy: Path, path: str) -> None:
    """Delete a ``[grade] removed`` path. Where the change put a file or a link in place of one
    of its folders, the path is not there: nothing is removed, and nothing is followed."""
    parent = copy
    for part in Path(path).parts[:-1]:
        parent = parent / part
        if parent.is_symlink() or not parent.is_dir():
            return
    remove_entry(copy, path)


def _read_base(snapshot: Snapshot, path: str) -> bytes | None:
    target = snapshot.root / path
    if target.is_symlink() or not target.is_file():
        return None
    try:
        return target.read_bytes()
    except OSError as exc:
        raise HarnessdriveError(f"cannot read the base copy of {path}: {exc}") from exc
