"""The harnessdrive task a cell runs: the case's starting files with its skill installed in
them, its prompt in the harness's dialect, and the task's own grader. A treatment is the
variant's, laid over the workspace by the trial core.

An inline case (a prompt and a fixture folder) becomes a task whose grader only checks that
grading ran: its verdict is the case function's. A case naming a task folder keeps that task's
grader and hidden files.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import replace
from pathlib import Path

import tomli_w

from harnessdrive.errors import UserError
from harnessdrive.pytest_plugin.case import EvalCase
from harnessdrive.pytest_plugin.layout import CaseFiles, inline_task_id
from harnessdrive.pytest_plugin.matrix import Cell
from harnessdrive.tasks.loading import Suite, Task, load_task
from harnessdrive.tasks.models import RepoSpec, SuiteSpec

INLINE_GRADE = {"command": '{python} -c "pass"', "junit": False, "timeout": 60}
"""An inline case has no hidden tests: the grade step runs, and the case function decides."""


def cell_suite(case: EvalCase, files: CaseFiles, cell: Cell, build: Path) -> tuple[Suite, str]:
    """The cell's one-task suite, built under ``build``, and where the skill was installed."""
    harness = cell.variant.harness
    arm = harness  # a treatment is laid over the workspace by the trial core
    folder = build / files.name / arm
    base = _base_task(case, files, build)
    task = base
    installed = ""
    typed = case.task if case.task is not None else base.prompt
    if files.skill is not None:
        if base.spec.repo.ref is not None:
            raise UserError(
                f"{files.name}: a skill cannot be installed into a task read at a git ref "
                f"({base.spec.repo.ref}); point repo.path at a folder"
            )
        repo = folder / "repo"
        if not repo.is_dir():
            shutil.copytree(base.repo_path, repo, ignore=shutil.ignore_patterns(".git"))
        installed = files.skill.install(repo, harness)
        prompt = files.skill.prompt(typed, harness)
        spec = base.spec.model_copy(update={"repo": RepoSpec(path=str(repo)), "prompt": prompt})
        digest = hashlib.sha256(f"{base.fingerprint}\0{arm}\0{prompt}".encode()).hexdigest()
        task = replace(base, spec=spec, repo_path=repo, prompt=prompt, fingerprint=digest[:16])
    elif case.task is not None and case.task != base.prompt:
        task = replace(base, prompt=case.task)
    folder.mkdir(parents=True, exist_ok=True)
    return Suite(
        spec=SuiteSpec(name=_suite_name(files.name)), folder=folder, tasks=(task,)
    ), installed


def _base_task(case: EvalCase, files: CaseFiles, build: Path) -> Task:
    if files.task_dir is not None:
        task = load_task(files.task_dir)
        # Recorded under the case's id, which names where the case lives: the same task folder
        # id in two skills' evals never shares trials.
        return replace(task, spec=task.spec.model_copy(update={"id": files.task_id}))
    assert files.fixture is not None
    folder = build / files.name / "task"
    if not (folder / "task.toml").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        data = {
            "id": files.task_id,
            "title": files.name,
            "prompt": case.task or "",
            "repo": {"path": str(files.fixture)},
            "grade": INLINE_GRADE,
            "limits": {"agent_timeout": case.timeout or 900},
        }
        (folder / "task.toml").write_text(tomli_w.dumps(data))
    return load_task(folder)


def _suite_name(name: str) -> str:
    return inline_task_id(name)
