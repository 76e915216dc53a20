"""``harnessdrive export harbor SUITE``: a suite written as Harbor tasks (schema 1.4).

Each task becomes ``<out>/<id>/`` with ``instruction.md``; ``environment/Dockerfile`` (the
task's image, or the base image given, ``WORKDIR /app``, the starting files copied in,
``RUN`` for each setup command); ``tests/test.sh`` (the hidden files put in place, the task's
test command run, ``reward.txt`` written from its exit status); and ``solution/solve.sh``, which
writes the files the reference changes. An imported Harbor task goes back as it came: its own
verifier and image. A task that cannot be written is one line naming it.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from harnessdrive.errors import HarnessdriveError, UserError
from harnessdrive.grading.kinds.harbor import HarborGradeSpec
from harnessdrive.harbor.base_files import changed_files, write_base, write_solved
from harnessdrive.harbor.dockerfile import SETUP_MARKER
from harnessdrive.tasks.loading import Suite, Task

WORKDIR = "/app"
DEFAULT_BASE_IMAGE = "python:3.12-slim"
_REWARD = "/logs/verifier/reward.txt"


@dataclass
class ExportReport:
    folder: Path
    written: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def export_harbor(suite: Suite, out: Path, *, base_image: str = DEFAULT_BASE_IMAGE) -> ExportReport:
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    report = ExportReport(out)
    for task in suite.tasks:
        try:
            _export_task(task, out / task.id, base_image)
            report.written.append(task.id)
        except (HarnessdriveError, OSError, ValueError) as exc:
            shutil.rmtree(out / task.id, ignore_errors=True)
            report.refused.append(f"task {task.id}: {' '.join(str(exc).split())[:300]}")
    dataset = {
        "dataset": {"name": f"harnessdrive/{suite.name}", "description": suite.spec.description}
    }
    (out / "dataset.toml").write_text(tomli_w.dumps(dataset))
    return report


def _export_task(task: Task, dest: Path, base_image: str) -> None:
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "environment").mkdir(parents=True)
    (dest / "tests").mkdir()
    (dest / "instruction.md").write_text(task.prompt)
    grade = task.spec.grade
    image = _image_name(task, base_image)
    with tempfile.TemporaryDirectory(prefix="harbor-export-") as scratch_text:
        scratch = Path(scratch_text)
        app = dest / "environment" / "app"
        write_base(task, app, scratch)
        workdir = WORKDIR
        env = task.spec.environment
        if env is not None and env.workdir:
            workdir = env.workdir
        _dockerfile(dest / "environment" / "Dockerfile", image, workdir, task)
        if isinstance(grade, HarborGradeSpec):
            shutil.rmtree(dest / "tests")
            shutil.copytree(task.folder / grade.tests, dest / "tests", symlinks=True)
        else:
            _verifier(task, dest / "tests", workdir)
        solved = scratch / "solved"
        if write_solved(task, app, solved):
            _solution(dest / "solution", app, solved)
    (dest / "task.toml").write_text(tomli_w.dumps(_task_toml(task), multiline_strings=True))


def _image_name(task: Task, base_image: str) -> str:
    env = task.spec.environment
    if env is None:
        return base_image
    if env.dockerfile is not None:
        raise UserError("its image is built from a Dockerfile; export the built image's name")
    return env.image or base_image


def _dockerfile(path: Path, image: str, workdir: str, task: Task) -> None:
    lines = [f"FROM {image}", f"WORKDIR {workdir}"]
    env = task.spec.environment
    for name, value in sorted((env.env if env else {}).items()):
        lines.append(f"ENV {name}={shlex.quote(value)}")
    lines.append(f"COPY app/ {workdir}/")
    if task.spec.setup.commands:
        lines.append(SETUP_MARKER)
    for command in task.spec.setup.commands:
        lines.append("RUN " + command.replace("{python}", "python3"))
    path.write_text("\n".join(lines) + "\n")


def _verifier(task: Task, tests: Path, workdir: str) -> None:
    command = getattr(task.spec.grade, "command", None)
    if not isinstance(command, str):
        raise UserError(f"its grader kind {task.spec.grade.kind!r} has no test command to export")
    hidden = tests / "hidden"
    for item in task.hidden:
        target = hidden / item.target
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(item.source, target)
    run = command.replace("{python}", "python3").replace("{workspace}", workdir)
    script = [
        "#!/bin/bash",
        "# Written by harnessdrive: the hidden files are put in place, then the test command",
        "# decides (exit 0: reward 1).",
        "mkdir -p /logs/verifier",
        f"cd {shlex.quote(workdir)}",
        "if [ -d /tests/hidden ]; then cp -r /tests/hidden/. . ; fi",
        "# The repository root importable, as harnessdrive runs a task's tests.",
        'export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"',
        f"if ( {run} ); then echo 1 > {_REWARD}; else echo 0 > {_REWARD}; fi",
    ]
    (tests / "test.sh").write_text("\n".join(script) + "\n")
    (tests / "test.sh").chmod(0o755)


def _solution(folder: Path, base: Path, solved: Path) -> None:
    changed, deleted = changed_files(base, solved)
    files = folder / "files"
    folder.mkdir()
    for rel in changed:
        (files / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(solved / rel, files / rel, follow_symlinks=False)
    script = ["#!/bin/bash", "# The reference: the files it changes, written over the task's."]
    if changed:
        script.append("cp -a /solution/files/. .")
    for rel in deleted:
        script.append(f"rm -f -- {shlex.quote(rel)}")
    (folder / "solve.sh").write_text("\n".join(script) + "\n")
    (folder / "solve.sh").chmod(0o755)


def _task_toml(task: Task) -> dict[str, Any]:
    spec = task.spec
    metadata: dict[str, Any] = {"harnessdrive": {"task": task.id}}
    grade = spec.grade
    if isinstance(grade, HarborGradeSpec) and grade.threshold != 1.0:
        metadata["harnessdrive"]["threshold"] = grade.threshold
    if grade.protected:
        metadata["harnessdrive"]["protected"] = list(grade.protected)
    environment: dict[str, Any] = {"allow_internet": spec.setup.network == "host"}
    if spec.limits.memory_mb:
        environment["memory_mb"] = spec.limits.memory_mb
    verifier: dict[str, Any] = {"timeout_sec": grade.timeout}
    if isinstance(grade, HarborGradeSpec) and grade.env:
        verifier["env"] = dict(grade.env)
    return {
        "schema_version": "1.4",
        "task": {"name": f"harnessdrive/{task.id}", "description": spec.title or task.id},
        "metadata": metadata,
        "agent": {"timeout_sec": spec.limits.agent_timeout},
        "verifier": verifier,
        "environment": environment,
    }
