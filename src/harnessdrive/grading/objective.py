"""Measuring an improvement task's objective in a copy of its own.

The objective's files are copied into a fresh copy of the base state plus the change (never the
agent's workspace, never the deciding copy with the hidden tests), and its command runs there in
that copy's sandbox, once per sample. What it prints is hostile data: the value is the last
number of its output, or the ``value`` of the last JSON line that holds one.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harnessdrive.errors import WorkspaceError
from harnessdrive.grading.commands import run_command
from harnessdrive.grading.kinds.base import GradingCopy
from harnessdrive.tasks.improve_models import ObjectiveSpec
from harnessdrive.workspace.placing import remove_entry, write_file

OBJECTIVE_LABEL = "objective"
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_HEADER_LINES = 2  # the log's "$ command" and "# run as:" lines
_MAX_OUTPUT = 1024 * 1024


@dataclass(frozen=True)
class Measurement:
    """Every sample of one measurement, or why there is none."""

    samples: tuple[float, ...] = ()
    error: str | None = None
    machinery: bool = False
    """The error is the machinery's (a copy that could not be built), not the measured state's."""

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.samples)


def measure(copy: GradingCopy, objective: ObjectiveSpec, task_folder: Path) -> Measurement:
    """Inject the objective's files into ``copy`` and take ``objective.repeats`` samples."""
    for folder in _objective_folders(copy.setup.snapshot.root, objective):
        # What the agent left in a folder only the objective has (a json.py beside its script,
        # which Python would import first) must not run as part of the measurement.
        with contextlib.suppress(WorkspaceError):  # a link above it: writing replaces that
            remove_entry(copy.root, folder)
    for item in objective.inject:
        write_file(copy.root, item.target, (task_folder / item.source).read_bytes())
    samples = []
    for index in range(1, objective.repeats + 1):
        label = f"{OBJECTIVE_LABEL}-{index}"
        command = objective.command.replace("{sample}", str(index))
        # The value is read from stdout alone: a timing or a warning on stderr is no value.
        run, _ = run_command(
            copy, command, label, timeout=objective.timeout, junit=False, stderr_apart=True
        )
        if run.timed_out:
            return Measurement(error=f"sample {index} timed out after {objective.timeout:g}s")
        if run.exit_code != 0:
            return Measurement(error=f"sample {index} exited with {run.exit_code}")
        value = read_value(copy.logs / f"grade-{label}.log")
        if value is None:
            return Measurement(error=f"sample {index} printed no number")
        samples.append(value)
    return Measurement(samples=tuple(samples))


def _objective_folders(base: Path, objective: ObjectiveSpec) -> list[str]:
    """The top-most folder of each injected file that the base repository does not have."""
    found: list[str] = []
    for item in objective.inject:
        parts = PurePosixPath(item.target.replace("\\", "/")).parts[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if not (base / folder).is_dir():
                if folder not in found:
                    found.append(folder)
                break
    return found


def read_value(log: Path) -> float | None:
    """The objective's value from its log: a JSON line's ``value``, else the last number."""
    try:
        with log.open("rb") as handle:
            text = handle.read(_MAX_OUTPUT).decode("utf-8", "replace")
    except OSError:
        return None
    lines = text.splitlines()[_HEADER_LINES:]
    for line in reversed(lines):
        stripped = line.strip()
        if stripped.startswith("{"):
            try:
                data = json.loads(stripped)
            except ValueError:
                continue
            value = data.get("value") if isinstance(data, dict) else None
            if isinstance(value, int | float) and not isinstance(value, bool):
                return _finite(float(value))
    for line in reversed(lines):
        found = _NUMBER.findall(line)
        if found:
            return _finite(float(found[-1]))
    return None


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
