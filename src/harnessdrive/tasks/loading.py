"""Read suites and tasks from disk into resolved, immutable values."""

from __future__ import annotations

import hashlib
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from harnessdrive.errors import TaskFormatError, UserError
from harnessdrive.tasks.check_models import FixtureSpec
from harnessdrive.tasks.improve_files import check_improve_files, improve_digest, improve_sources
from harnessdrive.tasks.models import SuiteSpec, TaskSpec, VariantSpec
from harnessdrive.tasks.problems import describe_validation_error

SUITE_FILE = "suite.toml"
TASK_FILE = "task.toml"
SOLUTION_PATCH = "solution.patch"

_M = TypeVar("_M", bound=BaseModel)


@dataclass(frozen=True)
class HiddenSource:
    source: Path
    target: str


@dataclass(frozen=True)
class Solution:
    """The reference solution: a patch file, or a folder whose files overlay the repository."""

    patch: Path | None = None
    overlay: Path | None = None


@dataclass(frozen=True)
class Fixture:
    """A self-test change from ``[[check.fixtures]]``, its file or folder resolved."""

    spec: FixtureSpec
    change: Solution

    @property
    def name(self) -> str:
        return self.spec.label


@dataclass(frozen=True)
class Task:
    spec: TaskSpec
    folder: Path
    prompt: str
    repo_path: Path
    hidden: tuple[HiddenSource, ...]
    solution: Solution | None
    fingerprint: str
    """Changes whenever anything that defines the task changes; guards resumed results."""
    shared: tuple[Path, ...] = ()
    """``setup.shared`` resolved: folders its commands and agent may read, never change."""
    fixtures: tuple[Fixture, ...] = ()
    """Self-test changes for ``check``; they never reach a trial."""

    @property
    def id(self) -> str:
        return self.spec.id


@dataclass(frozen=True)
class Suite:
    spec: SuiteSpec
    folder: Path
    tasks: tuple[Task, ...]

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def default_variants(self) -> tuple[VariantSpec, ...]:
        return self.spec.variant_specs()


def load_suite(path: Path) -> Suite:
    """Load a suite folder, or a single task folder as a suite of one."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"suite not found: {path}")
    path = path.resolve()
    if path.is_file():
        path = path.parent
    if (path / SUITE_FILE).is_file():
        spec = _read_model(path / SUITE_FILE, SuiteSpec)
        folders = _task_folders(path, spec.tasks)
        tasks = tuple(load_task(folder) for folder in folders)
    elif (path / TASK_FILE).is_file():
        task = load_task(path)
        spec = SuiteSpec(name=task.id, tasks=(".",))
        tasks = (task,)
    else:
        raise UserError(f"no {SUITE_FILE} or {TASK_FILE} in {path}")
    if not tasks:
        raise TaskFormatError(f"{path / SUITE_FILE}: no task folders match {list(spec.tasks)}")
    _check_shared_hides_tasks(tasks)
    seen: dict[str, Path] = {}
    for task in tasks:
        if task.id in seen:
            raise TaskFormatError(
                f"task id {task.id!r} is used twice: {seen[task.id]} and {task.folder}"
            )
        seen[task.id] = task.folder
    return Suite(spec=spec, folder=path, tasks=tasks)


def load_task(folder: Path) -> Task:
    folder = Path(folder).resolve()
    task_file = folder / TASK_FILE
    if not task_file.is_file():
        raise UserError(f"no {TASK_FILE} in {folder}")
    spec = _read_model(task_file, TaskSpec)
    prompt = spec.prompt if spec.prompt is not None else _read_prompt(folder, spec, task_file)
    repo_path = (folder / spec.repo.path).resolve()
    if not repo_path.is_dir():
        raise UserError(f"{task_file}: repo path does not exist: {repo_path}")
    hidden = _hidden_files(folder, spec, task_file)
    check_improve_files(folder, spec, task_file)
    solution = _solution(folder)
    shared = _shared_folders(folder, spec, task_file, repo_path, hidden, solution)
    fixtures = _fixtures(folder, spec, task_file)
    return Task(
        spec=spec,
        folder=folder,
        prompt=prompt,
        repo_path=repo_path,
        hidden=hidden,
        solution=solution,
        fingerprint=_fingerprint(task_file, prompt, repo_path, hidden, solution, spec),
        shared=shared,
        fixtures=fixtures,
    )


def _read_model(path: Path, model: type[_M]) -> _M:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise TaskFormatError(f"{path}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"{path}: cannot read: {exc}") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise TaskFormatError(f"{path}: {describe_validation_error(exc, model)}") from None


def _read_prompt(folder: Path, spec: TaskSpec, task_file: Path) -> str:
    assert spec.prompt_file is not None
    prompt_path = folder / spec.prompt_file
    try:
        return prompt_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFormatError(f"{task_file}: cannot read prompt_file: {exc}") from None


def _hidden_files(folder: Path, spec: TaskSpec, task_file: Path) -> tuple[HiddenSource, ...]:
    if spec.grade.hidden is not None:
        files = []
        for entry in spec.grade.hidden:
            source = (folder / entry.source).resolve()
            if not source.is_file():
                raise TaskFormatError(f"{task_file}: hidden file not found: {entry.source}")
            files.append(HiddenSource(source=source, target=entry.target))
        return tuple(files)
    hidden_dir = folder / "hidden"
    if not hidden_dir.is_dir():
        return ()
    return tuple(
        HiddenSource(source=path, target=path.relative_to(hidden_dir).as_posix())
        for path in sorted(hidden_dir.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    )


def _shared_folders(
    folder: Path,
    spec: TaskSpec,
    task_file: Path,
    repo_path: Path,
    hidden: tuple[HiddenSource, ...],
    solution: Solution | None,
) -> tuple[Path, ...]:
    """``setup.shared`` as folders, none of which may show what the agent must not see."""
    secret = [folder, repo_path, *(item.source for item in hidden), *improve_sources(folder, spec)]
    if solution is not None:
        secret += [p for p in (solution.patch, solution.overlay) if p is not None]
    shared = []
    for entry in spec.setup.shared:
        path = (folder / entry).resolve()
        if not path.is_dir():
            raise TaskFormatError(f"{task_file}: setup.shared folder not found: {entry}")
        for item in secret:
            if item.resolve().is_relative_to(path):
                raise TaskFormatError(
                    f"{task_file}: setup.shared folder {entry} holds {item}, which the agent"
                    " must not see"
                )
        shared.append(path)
    return tuple(shared)


def _check_shared_hides_tasks(tasks: tuple[Task, ...]) -> None:
    """No task's shared folder may show another task's folder (its hidden tests)."""
    for task in tasks:
        for path in task.shared:
            for other in tasks:
                if other.folder.is_relative_to(path):
                    raise TaskFormatError(
                        f"{task.folder / TASK_FILE}: setup.shared folder {path} holds the task"
                        f" folder {other.folder}, which the agent must not see"
                    )


def _solution(folder: Path) -> Solution | None:
    solution_dir = folder / "solution"
    if not solution_dir.is_dir():
        return None
    if (solution_dir / SOLUTION_PATCH).is_file():
        return Solution(patch=solution_dir / SOLUTION_PATCH)
    return Solution(overlay=solution_dir)


def _fixtures(folder: Path, spec: TaskSpec, task_file: Path) -> tuple[Fixture, ...]:
    fixtures = []
    for item in spec.check.fixtures:
        where = f"{task_file}: check fixture {item.label!r}"
        if item.visible is not None and spec.grade.visible_test_command is None:
            raise TaskFormatError(f"{where} sets 'visible' but the task has no visible_command")
        if item.patch is not None:
            patch = (folder / item.patch).resolve()
            if not patch.is_file():
                raise TaskFormatError(f"{where}: patch file not found: {item.patch}")
            fixtures.append(Fixture(spec=item, change=Solution(patch=patch)))
        else:
            assert item.overlay is not None
            overlay = (folder / item.overlay).resolve()
            if not overlay.is_dir():
                raise TaskFormatError(f"{where}: overlay folder not found: {item.overlay}")
            fixtures.append(Fixture(spec=item, change=Solution(overlay=overlay)))
    return tuple(fixtures)


def _task_folders(suite_dir: Path, patterns: tuple[str, ...]) -> list[Path]:
    folders: list[Path] = []
    for pattern in patterns:
        matches = sorted(suite_dir.glob(pattern)) if _is_glob(pattern) else [suite_dir / pattern]
        for match in matches:
            if (match / TASK_FILE).is_file() and match.resolve() not in folders:
                folders.append(match.resolve())
            elif not _is_glob(pattern):
                raise TaskFormatError(f"{suite_dir / SUITE_FILE}: no {TASK_FILE} in {match}")
    return folders


def _is_glob(pattern: str) -> bool:
    return any(char in pattern for char in "*?[")


def _fingerprint(
    task_file: Path,
    prompt: str,
    repo_path: Path,
    hidden: tuple[HiddenSource, ...],
    solution: Solution | None,
    spec: TaskSpec,
) -> str:
    digest = hashlib.sha256()
    digest.update(task_file.read_bytes())
    digest.update(prompt.encode())
    digest.update(str(repo_path).encode())
    for item in hidden:
        digest.update(os.fsencode(item.target))  # a file name need not be UTF-8
        digest.update(item.source.read_bytes())
    if solution is not None and solution.patch is not None:
        digest.update(solution.patch.read_bytes())
    elif solution is not None and solution.overlay is not None:
        for path in sorted(solution.overlay.rglob("*")):
            if path.is_file():
                digest.update(os.fsencode(path.relative_to(solution.overlay).as_posix()))
                digest.update(path.read_bytes())
    digest.update(improve_digest(task_file.parent, spec))
    return digest.hexdigest()[:16]
