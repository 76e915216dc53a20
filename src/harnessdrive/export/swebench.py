"""``harnessdrive export swebench SUITE``: a SWE-bench 5.0 task repository, and a predictions
file from a run's diffs, so patches can be graded by SWE-bench's own harness.

::

    sweb.yaml                       the dataset and split this repository publishes
    tasks/<instance_id>/task.yaml   instance_id, repo, version, base_commit, split, image,
                                    log_parser, eval_type, datasets
                        tests.json  FAIL_TO_PASS and PASS_TO_PASS
                        problem_statement.md  hints.md  gold.patch  test.patch
                        eval.sh     applies test.patch, runs the tests between the markers
                        Dockerfile  the base image with the starting files
    predictions.jsonl               instance_id, model_name_or_path, model_patch (with a run)
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harnessdrive.errors import HarnessdriveError, UserError
from harnessdrive.harbor.base_files import write_base, write_solved
from harnessdrive.harbor.exporter import DEFAULT_BASE_IMAGE
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks.loading import Suite, Task

START_MARKER = ">>>>> Start Test Output"
END_MARKER = ">>>>> End Test Output"
SPLIT = "test"
WORKDIR = "/testbed"


@dataclass
class SwebenchReport:
    folder: Path
    written: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    predictions: int = 0


def instance_id(suite: Suite, task: Task) -> str:
    repo = _repo_name(suite, task).replace("/", "__")
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{repo}-{task.id}")


def image_name(instance: str) -> str:
    """SWE-bench's naming rule for an instance's evaluation image."""
    return f"swebench/sweb.eval.x86_64.{instance.replace('__', '_1776_')}:latest".lower()


def export_swebench(
    suite: Suite,
    out: Path,
    *,
    results: Path | None = None,
    variant: str | None = None,
    base_image: str = DEFAULT_BASE_IMAGE,
) -> SwebenchReport:
    out = out.resolve()
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    report = SwebenchReport(out)
    dataset = f"harnessdrive/{suite.name}"
    ids = {}
    for task in suite.tasks:
        instance = instance_id(suite, task)
        try:
            _write_instance(suite, task, instance, out / "tasks" / instance, dataset, base_image)
            report.written.append(instance)
            ids[task.id] = instance
        except (HarnessdriveError, OSError, ValueError) as exc:
            report.refused.append(f"task {task.id}: {' '.join(str(exc).split())[:300]}")
    sweb = {"datasets": [{"name": dataset, "splits": [SPLIT]}]}
    (out / "sweb.yaml").write_text(_yaml(sweb))
    if results is not None:
        report.predictions = _predictions(results, ids, variant, out / "predictions.jsonl")
    return report


def _write_instance(
    suite: Suite, task: Task, instance: str, dest: Path, dataset: str, base_image: str
) -> None:
    command = getattr(task.spec.grade, "command", None)
    if not isinstance(command, str):
        raise UserError(f"its grader kind {task.spec.grade.kind!r} has no test command")
    if task.solution is None:
        raise UserError("it has no reference solution (gold.patch)")
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="swebench-export-") as scratch_text:
        scratch = Path(scratch_text)
        base = scratch / "base"
        write_base(task, base, scratch)
        solved = scratch / "solved"
        write_solved(task, base, solved)
        gold = _diff(base, solved)
        with_tests = scratch / "with-tests"
        _copy(base, with_tests)
        for item in task.hidden:
            target = with_tests / item.target
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(item.source.read_bytes())
        test_patch = _diff(base, with_tests)
        (dest / "Dockerfile").write_text(_dockerfile(task, base_image))
        _copy(base, dest / "repo")
    metadata = task.spec.metadata
    record = {
        "instance_id": instance,
        "repo": _repo_name(suite, task),
        "version": str(metadata.get("version", "1.0")),
        "base_commit": str(metadata.get("commit") or metadata.get("base_commit") or "HEAD"),
        "split": SPLIT,
        "image": image_name(instance),
        "log_parser": "pytest" if "pytest" in command else "exit_code",
        "eval_type": "fail_to_pass",
        "datasets": [dataset],
    }
    (dest / "task.yaml").write_text(_yaml(record))
    (dest / "tests.json").write_text(json.dumps(_test_lists(task), indent=2) + "\n")
    (dest / "problem_statement.md").write_text(task.prompt)
    (dest / "hints.md").write_text("")
    (dest / "gold.patch").write_text(gold)
    (dest / "test.patch").write_text(test_patch)
    run = command.replace("{python}", "python3").replace("{workspace}", WORKDIR)
    (dest / "eval.sh").write_text(
        "#!/bin/bash\nset -uo pipefail\n"
        f"cd {WORKDIR}\n"
        "git apply --whitespace=nowarn /eval/test.patch || patch -p1 < /eval/test.patch\n"
        f"echo '{START_MARKER}'\n{run}\nstatus=$?\necho '{END_MARKER}'\nexit $status\n"
    )
    (dest / "eval.sh").chmod(0o755)


def _dockerfile(task: Task, base_image: str) -> str:
    env = task.spec.environment
    image = env.image if env is not None and env.image else base_image
    lines = [f"FROM {image}", f"WORKDIR {WORKDIR}", f"COPY repo/ {WORKDIR}/"]
    lines += ["RUN " + c.replace("{python}", "python3") for c in task.spec.setup.commands]
    return "\n".join(lines) + "\n"


def _test_lists(task: Task) -> dict[str, list[str]]:
    outcomes = task.folder / "reference-outcomes.json"
    if outcomes.is_file():
        try:
            data = json.loads(outcomes.read_text())
        except ValueError:
            data = {}
        passed = data.get("outcomes") if isinstance(data, dict) else None
        if isinstance(passed, dict):
            return {
                "FAIL_TO_PASS": sorted(k for k, v in passed.items() if v == "passed"),
                "PASS_TO_PASS": [],
            }
    return {"FAIL_TO_PASS": sorted(item.target for item in task.hidden), "PASS_TO_PASS": []}


def _repo_name(suite: Suite, task: Task) -> str:
    repo = task.spec.metadata.get("repo")
    return repo if isinstance(repo, str) and repo else f"harnessdrive/{suite.name}"


def _predictions(results: Path, ids: dict[str, str], variant: str | None, dest: Path) -> int:
    chosen: dict[str, tuple[int, dict[str, Any]]] = {}
    for path in sorted(results.glob("trials/*/*/*/r*/result.json")):
        try:
            result = TrialResult.model_validate_json(path.read_text())
        except (OSError, ValueError):
            continue
        if result.task not in ids or (variant is not None and result.variant_label != variant):
            continue
        diff = path.parent / "diff.patch"
        patch = diff.read_text(errors="replace") if diff.is_file() else ""
        line = {
            "instance_id": ids[result.task],
            "model_name_or_path": result.variant_label,
            "model_patch": patch,
        }
        key = f"{result.task}\0{result.variant_label}"
        if key not in chosen or result.repetition < chosen[key][0]:
            chosen[key] = (result.repetition, line)
    with dest.open("w") as handle:
        for _, line in chosen.values():
            handle.write(json.dumps(line) + "\n")
    return len(chosen)


def _copy(source: Path, dest: Path) -> None:
    import shutil

    shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True)


def _diff(before: Path, after: Path) -> str:
    # git diff --no-index names files by the paths it is given: folders a/ and b/, without
    # prefixes, make a patch applied with -p1 in the repository.
    with tempfile.TemporaryDirectory(prefix="swebench-diff-") as pair_text:
        pair = Path(pair_text)
        _copy(before, pair / "a")
        _copy(after, pair / "b")
        out = subprocess.run(
            ["git", "diff", "--no-index", "--binary", "--no-prefix", "--", "a", "b"],
            cwd=pair,
            capture_output=True,
            text=True,
            check=False,
        )
    if out.returncode not in (0, 1):
        raise UserError(f"cannot diff: {out.stderr[:200]}")
    return out.stdout


def _yaml(data: Any, indent: int = 0) -> str:
    """The small YAML subset these files need: maps, lists, strings and numbers."""
    pad = "  " * indent
    lines = []
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, (dict, list)):
                lines.append(f"{pad}{key}:")
                lines.append(_yaml(value, indent + 1).rstrip("\n"))
            else:
                lines.append(f"{pad}{key}: {json.dumps(value)}")
    elif isinstance(data, list):
        for item in data:
            if isinstance(item, dict):
                first, *rest = _yaml(item, indent + 1).rstrip("\n").splitlines()
                lines.append(f"{pad}- {first.strip()}")
                lines += rest
            else:
                lines.append(f"{pad}- {json.dumps(item)}")
    return "\n".join(lines) + "\n"
