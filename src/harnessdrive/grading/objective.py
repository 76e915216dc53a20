"""Measuring an improvement task's objective in a copy of its own.

The objective's files are copied into a fresh copy of the base state plus the change (never the
agent's workspace, never the deciding copy with the hidden tests), and its command runs there in
that copy's sandbox, once per sample. What it prints is hostile data.

A command that starts the objective runner (``{measure}``, grading/objective_runner/) is read
only through it: each sample gets a new token over a pipe the runner drains before the workload
starts, and the value is the one on the report line that carries that token; whatever the
measured code prints is never read. A plain command (a timer, a size, an instruction counter
that measures from outside) gives the last number of its stdout, or the ``value`` of the last
JSON line that holds one; ``check`` attacks such objectives (checking/attacks.py).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from harnessdrive.errors import WorkspaceError
from harnessdrive.grading.commands import run_command
from harnessdrive.grading.kinds.base import GradingCopy
from harnessdrive.grading.objective_runner import REPORT_KEY, install_runner
from harnessdrive.tasks.improve_models import ObjectiveSpec
from harnessdrive.workspace.placing import remove_entry, write_file

OBJECTIVE_LABEL = "objective"
RUNNER_PLACEHOLDER = "{measure}"
RUNNER_FOLDER = "objective-runner"
_MAX_LINE = 4096
"""A JSON line longer than this is no value: a bound on what is parsed (size and depth)."""
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_HEADER_LINES = 2  # the log's "$ command" and "# run as:" lines
_MAX_OUTPUT = 1024 * 1024


@dataclass(frozen=True)
class Measurement:
    """Every sample of one measurement, or why there is none."""

    samples: tuple[float, ...] = ()
    error: str | None = None
    result: float | None = None
    """The runner's digest of the workload's result (operations mode), when it reported one."""
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
    runner = uses_runner(objective.command)
    isolation = None
    template = objective.command
    if runner:
        runner_folder = copy.scratch / RUNNER_FOLDER
        parent = install_runner(runner_folder)
        readonly = (*copy.isolation.readonly, runner_folder)
        isolation = replace(copy.isolation, readonly=readonly)
        template = template.replace(RUNNER_PLACEHOLDER, f"{{python}} -I {shlex.quote(str(parent))}")
    samples = []
    results: set[float | None] = set()
    for index in range(1, objective.repeats + 1):
        label = f"{OBJECTIVE_LABEL}-{index}"
        # Written anew for each sample: the runner removes what only it may read (its keys),
        # and nothing an earlier sample's workload did to them carries over.
        for item in objective.inject:
            write_file(copy.root, item.target, (task_folder / item.source).read_bytes())
        command = template.replace("{sample}", str(index))
        token = secrets.token_hex(16) if runner else None
        with _token_pipe(copy.scratch / f"{label}.token", token) as stdin:
            # The value is read from stdout alone: a timing or a warning on stderr is no value.
            run, _ = run_command(
                copy,
                command,
                label,
                timeout=objective.timeout,
                junit=False,
                stderr_apart=True,
                isolation=isolation,
                stdin=stdin,
            )
        if run.timed_out:
            return Measurement(error=f"sample {index} timed out after {objective.timeout:g}s")
        if run.exit_code != 0:
            return Measurement(error=f"sample {index} exited with {run.exit_code}")
        log = copy.logs / f"grade-{label}.log"
        value: float | None
        if token is not None:
            report = read_report(log, token)
            if report is None:
                return Measurement(error=f"sample {index}: the objective runner reported no value")
            value, result = report
            results.add(result)
        else:
            value = read_value(log)
        if value is None:
            return Measurement(error=f"sample {index} printed no number")
        samples.append(value)
    if len(results) > 1:
        return Measurement(error="the workload's result differs from one sample to the next")
    return Measurement(samples=tuple(samples), result=results.pop() if results else None)


def uses_runner(command: str) -> bool:
    """Whether the objective's command measures through harnessdrive's objective runner."""
    return RUNNER_PLACEHOLDER in command


@contextlib.contextmanager
def _token_pipe(path: Path, token: str | None) -> Iterator[Path | None]:
    """A named pipe holding ``token``, the command's stdin: the runner reads it before the
    workload starts, so the workload, reopening the same stdin, finds it empty."""
    if token is None:
        yield None
        return
    path.unlink(missing_ok=True)
    os.mkfifo(path, 0o600)
    # Opened for reading and writing, it never blocks, and the command's open finds a writer.
    held = os.open(path, os.O_RDWR)
    try:
        os.write(held, f"{token}\n".encode())
        yield path
    finally:
        os.close(held)
        path.unlink(missing_ok=True)


def read_report(log: Path, token: str) -> tuple[float, float | None] | None:
    """The value (and the result's digest) of the runner's report line carrying ``token``;
    None when there is none, or more than one (the workload cannot know the token)."""
    found: list[tuple[float, float | None]] = []
    for line in _lines(log):
        if token not in line:
            continue
        data = _json_line(line)
        if data is None or data.get(REPORT_KEY) != token:
            continue
        value = _number(data.get("value"))
        if value is None:
            return None
        found.append((value, _number(data.get("result"))))
    return found[0] if len(found) == 1 else None


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
    lines = _lines(log)
    for line in reversed(lines):
        data = _json_line(line)
        if data is not None and "value" in data:
            value = _number(data["value"])
            if value is not None:
                return value
    for line in reversed(lines):
        found = _NUMBER.findall(line[-_MAX_LINE:])
        if found:
            return _finite(float(found[-1]))
    return None


def _lines(log: Path) -> list[str]:
    try:
        with log.open("rb") as handle:
            text = handle.read(_MAX_OUTPUT).decode("utf-8", "replace")
    except OSError:
        return []
    return text.splitlines()[_HEADER_LINES:]


def _json_line(line: str) -> dict[str, object] | None:
    """A JSON object on one line, bounded in size (hence in depth); anything else is None."""
    stripped = line.strip()
    if not stripped.startswith("{") or len(stripped) > _MAX_LINE:
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return _finite(float(value))
    except OverflowError:
        return None


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
