"""A schema check of a SWE-bench 5.0 task repository, written from its description (the task
repository layout of ``swebench/task/repo.py``), independently of our writer."""

from __future__ import annotations

import json
import re
from pathlib import Path

TASK_KEYS = {
    "instance_id": str,
    "repo": str,
    "version": str,
    "base_commit": str,
    "split": str,
    "image": str,
    "log_parser": str,
    "eval_type": str,
    "datasets": list,
}
TASK_FILES = ("task.yaml", "tests.json", "problem_statement.md", "hints.md", "gold.patch",
              "test.patch", "eval.sh", "Dockerfile")  # fmt: skip
PREDICTION_KEYS = {"instance_id", "model_name_or_path", "model_patch"}


def read_simple_yaml(text: str) -> dict[str, object]:
    """Top-level ``key: value`` pairs (values as JSON scalars) and ``key:`` lists of scalars."""
    data: dict[str, object] = {}
    current: list[object] | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("  - ") and current is not None:
            current.append(json.loads(line[4:]))
            continue
        key, _, value = line.partition(":")
        if value.strip():
            data[key] = json.loads(value.strip())
            current = None
        else:
            current = []
            data[key] = current
    return data


def image_rule(instance_id: str) -> str:
    return f"swebench/sweb.eval.x86_64.{instance_id.replace('__', '_1776_')}:latest".lower()


def problems(folder: Path) -> list[str]:
    found = []
    if not (folder / "sweb.yaml").is_file():
        found.append("no sweb.yaml")
    tasks = folder / "tasks"
    instances = sorted(p for p in tasks.iterdir() if p.is_dir()) if tasks.is_dir() else []
    if not instances:
        found.append("no tasks/<instance_id>/ folders")
    for task in instances:
        where = f"tasks/{task.name}"
        for name in TASK_FILES:
            if not (task / name).is_file():
                found.append(f"{where}: no {name}")
        if not (task / "task.yaml").is_file():
            continue
        record = read_simple_yaml((task / "task.yaml").read_text())
        for key, kind in TASK_KEYS.items():
            if not isinstance(record.get(key), kind):
                found.append(f"{where}/task.yaml: {key} missing or not a {kind.__name__}")
        if record.get("instance_id") != task.name:
            found.append(f"{where}: instance_id {record.get('instance_id')!r} is not its folder")
        if record.get("image") != image_rule(task.name):
            found.append(f"{where}: image {record.get('image')!r} breaks the naming rule")
        try:
            tests = json.loads((task / "tests.json").read_text())
        except (OSError, ValueError):
            tests = None
        if not (
            isinstance(tests, dict)
            and all(isinstance(tests.get(k), list) for k in ("FAIL_TO_PASS", "PASS_TO_PASS"))
        ):
            found.append(f"{where}/tests.json: FAIL_TO_PASS and PASS_TO_PASS lists needed")
        eval_sh = (task / "eval.sh").read_text() if (task / "eval.sh").is_file() else ""
        for marker in (">>>>> Start Test Output", ">>>>> End Test Output"):
            if marker not in eval_sh:
                found.append(f"{where}/eval.sh: does not print {marker!r}")
        for patch in ("gold.patch", "test.patch"):
            text = (task / patch).read_text() if (task / patch).is_file() else ""
            if not re.search(r"^diff --git ", text, re.M):
                found.append(f"{where}/{patch}: not a git patch")
    predictions = folder / "predictions.jsonl"
    if predictions.is_file():
        names = {p.name for p in instances}
        for number, line in enumerate(predictions.read_text().splitlines(), 1):
            try:
                item = json.loads(line)
            except ValueError:
                found.append(f"predictions.jsonl:{number}: not JSON")
                continue
            if not isinstance(item, dict) or set(item) != PREDICTION_KEYS:
                found.append(f"predictions.jsonl:{number}: keys must be {sorted(PREDICTION_KEYS)}")
            elif item["instance_id"] not in names:
                found.append(f"predictions.jsonl:{number}: unknown instance {item['instance_id']}")
    return found
