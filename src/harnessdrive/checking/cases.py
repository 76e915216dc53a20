"""What the grader's self-test found: each case of each task, and the task's problems."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from harnessdrive.grading.differential.baselines import Baseline


@dataclass(frozen=True)
class CheckCase:
    name: str
    """``untouched``, ``reference``, ``noop``, or the fixture's name."""
    expected: str
    outcome: str
    detail: str = ""
    kind: Literal["builtin", "fixture"] = "builtin"
    visible_expected: str | None = None
    visible: str | None = None
    """``pass`` or ``fail`` from the visible command, where it ran."""
    files: int | None = None
    lines: int | None = None
    """Files changed and lines added plus deleted, for a case that changed something."""
    disagreements: tuple[str, ...] = ()
    """How a fixture differs from what the task declares."""

    @property
    def ok(self) -> bool:
        return self.outcome == self.expected and not self.disagreements


@dataclass
class TaskCheck:
    task: str
    cases: list[CheckCase] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What is worth knowing but breaks nothing (an objective's spread, a warning)."""
    repeats: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """With ``check --repeat N``: each repeated case's verdicts, in order."""
    baselines: list[Baseline] = field(default_factory=list)
    """A differential task's baselines graded as trials (the starter's, the naive attempt's)."""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def fixtures(self) -> list[CheckCase]:
        return [case for case in self.cases if case.kind == "fixture"]


def checks_json(checks: list[TaskCheck], baselines: list[dict[str, Any]] | None = None) -> str:
    """The self-test as JSON: each task with its cases, its problems and whether it is ok, and
    the differential tasks' baselines (each with its own ``ok``)."""
    found = baselines or []
    return json.dumps(
        {
            "ok": all(item.ok for item in checks) and all(b["ok"] for b in found),
            "baselines": found,
            "tasks": [
                {
                    "task": item.task,
                    "ok": item.ok,
                    "problems": item.problems,
                    "notes": item.notes,
                    "repeats": item.repeats,
                    "cases": [{**asdict(case), "ok": case.ok} for case in item.cases],
                }
                for item in checks
            ],
        },
        indent=2,
    )


LOGS_PREFIX = "harnessdrive-check-logs-"


def new_logs_folder() -> Path:
    """A new folder for a check's logs, in the temporary folder."""
    return Path(tempfile.mkdtemp(prefix=LOGS_PREFIX))


@contextmanager
def check_logs(*, keep: bool) -> Iterator[Path]:
    """A new folder for a check's logs; removed when the check ends, however it ends, unless
    ``keep`` (then it is the user's, and the check says where it is)."""
    folder = new_logs_folder()
    try:
        yield folder
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
