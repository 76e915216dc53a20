"""The taxonomy is code: docs/security.md's tables say what grading/taxonomy.py says, every
outcome and status is in it, and grading maps each error to the side the table gives."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Literal, get_args

import pytest
import tomli_w

from harnessdrive.errors import AgentDataError, ChangeError, GradingError, SetupFailedError
from harnessdrive.grading import taxonomy
from harnessdrive.grading.grader import GradingSetup
from harnessdrive.grading.kinds.base import GradingCopy
from harnessdrive.grading.verdict import Outcome, Verdict
from harnessdrive.plugins.hookspecs import hookimpl
from harnessdrive.plugins.manager import plugin_manager
from harnessdrive.protocols.round import graded
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.store.results import Status
from harnessdrive.tasks import load_task
from harnessdrive.tasks.models import GradeSpec
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot

SECURITY = Path(__file__).parents[2] / "docs" / "security.md"
SECTION = "## The taxonomy"


def tables() -> list[list[list[str]]]:
    """The section's markdown tables, each as rows of cells (header and rule left out)."""
    text = SECURITY.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    end = section.find("\n## ", 1)
    found: list[list[list[str]]] = []
    rows: list[list[str]] = []
    for line in (section if end < 0 else section[:end]).splitlines():
        if line.startswith("|"):
            rows.append([cell.strip().strip("`") for cell in line.strip("|").split("|")])
        elif rows:
            found.append(rows[2:])
            rows = []
    if rows:
        found.append(rows[2:])
    return found


def as_rows(kinds: tuple[taxonomy.Kind, ...]) -> list[list[str]]:
    return [[k.name, "yes" if k.counted else "no", k.evidence] for k in kinds]


def test_the_docs_tables_are_the_codes() -> None:
    outcomes, statuses, errors = tables()
    assert outcomes == as_rows(taxonomy.OUTCOMES)
    assert statuses == as_rows(taxonomy.STATUSES)
    assert errors == [
        [row.kind.__name__, row.side, row.grading, row.elsewhere]
        for row in taxonomy.EXCEPTION_SIDES
    ]


def test_every_outcome_and_status_has_a_row_and_only_evidence_from_outside_drops_a_trial() -> None:
    assert [k.name for k in taxonomy.OUTCOMES] == list(get_args(Outcome))
    assert [k.name for k in taxonomy.STATUSES] == list(get_args(Status))
    assert [k.name for k in (*taxonomy.OUTCOMES, *taxonomy.STATUSES) if not k.counted] == [
        "not_graded",
        "could_not_run",
        "interrupted",
        "skipped",
    ]
    # Anything not ours by name, and the agent's data errors, land where the table says.
    assert taxonomy.side_of(AgentDataError("x")).side == "agent"
    assert taxonomy.side_of(MemoryError()).elsewhere == "could_not_run"
    assert taxonomy.side_of(KeyError("bug")).side == "machinery"


class RaisingSpec(GradeSpec):
    kind: Literal["raising"] = "raising"


class RaisingKind:
    """A grader kind that raises what it is told to: the grader's errors, by class."""

    name = "raising"
    spec_model = RaisingSpec

    def __init__(self) -> None:
        self.error: BaseException = GradingError("unset")

    def grade(self, copy: GradingCopy, spec: RaisingSpec) -> Verdict:
        raise self.error


class _Plugin:
    def __init__(self, kind: RaisingKind) -> None:
        self.kind = kind

    @hookimpl
    def harnessdrive_grader_kinds(self) -> list[object]:
        return [self.kind]


@pytest.fixture
def raising() -> Iterator[RaisingKind]:
    kind = RaisingKind()
    plugin = _Plugin(kind)
    plugin_manager().register(plugin, name="test-raising-kind")
    try:
        yield kind
    finally:
        plugin_manager().unregister(plugin)


@pytest.mark.parametrize(
    "error",
    [
        AgentDataError("a report nested too deep"),
        ChangeError("a name the copy cannot hold"),
        SetupFailedError("setup failed on the base state too"),
        GradingError("the oracle failed"),
    ],
)
def test_grading_maps_each_error_to_the_tables_outcome(
    tmp_path: Path, raising: RaisingKind, error: BaseException
) -> None:
    folder = tmp_path / "task"
    (folder / "repo").mkdir(parents=True)
    (folder / "repo" / "calc.py").write_text("x = 1\n")
    spec = {"id": "t", "prompt": "p", "repo": {"path": "repo"}, "grade": {"kind": "raising"}}
    (folder / "task.toml").write_text(tomli_w.dumps(spec))
    task = load_task(folder)
    snapshot = build_snapshot(task.repo_path, None, tmp_path / "snap")
    workspace = copy_snapshot(snapshot, tmp_path / "ws")
    (workspace / "calc.py").write_text("x = 2\n")
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(
        task=task,
        snapshot=snapshot,
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        sandbox=get_sandbox("none"),
        python=sys.executable,
    )
    raising.error = error
    verdict = graded(setup, capture_changes(snapshot, workspace))
    assert verdict.outcome == taxonomy.side_of(error).grading
    assert re.search(re.escape(str(error)), verdict.error or "")
