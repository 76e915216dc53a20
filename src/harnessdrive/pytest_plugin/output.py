"""``CaseOutput``: what a case function is handed for its cell, read from the results store and
the agent's final workspace."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from harnessdrive.errors import GradingError
from harnessdrive.pytest_plugin.matrix import Cell
from harnessdrive.pytest_plugin.skills import SkillCoverage
from harnessdrive.store.results import TrialResult
from harnessdrive.transcript.models import Transcript


class CannotEvaluate(GradingError):
    """A check that cannot evaluate: it raises, it never passes."""


@dataclass(frozen=True)
class CaseOutput:
    cell: Cell
    result: TrialResult
    folder: Path
    """The trial's folder in the results store (prompt.md, diff.patch, transcript.json, ...)."""
    workspace: Path | None
    """The agent's final workspace; None when it was not kept (a replay)."""
    skill: SkillCoverage | None = None
    golden: Path | None = None
    facts: dict[str, object] = field(default_factory=dict)
    derived: Transcript | None = None
    """A replay's transcript, derived again from the stored session logs."""

    @property
    def verdict(self) -> str:
        """The task grader's outcome: pass, fail, error or not_graded."""
        return self.result.outcome

    @property
    def cost_usd(self) -> float | None:
        return self.result.cost.usd

    @property
    def turns(self) -> int:
        return self.result.totals.turns

    @property
    def tool_calls(self) -> int:
        return self.result.totals.tool_calls

    @property
    def tokens(self) -> int:
        return self.result.totals.usage.total

    @property
    def files_written(self) -> tuple[str, ...]:
        """Paths the agent's change touched (added, modified or deleted)."""
        return tuple(str(p) for p in self.result.diff.paths)

    @property
    def diff(self) -> str:
        path = self.folder / "diff.patch"
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""

    @property
    def transcript(self) -> Transcript:
        if self.derived is not None:
            return self.derived
        path = self.folder / "transcript.json"
        if not path.is_file():
            raise CannotEvaluate(f"{self.cell.id}: no transcript.json in {self.folder}")
        return Transcript.model_validate_json(path.read_text())

    def path(self, rel: str) -> Path:
        """A file of the final workspace; one outside it is refused."""
        if self.workspace is None:
            raise CannotEvaluate(f"{self.cell.id}: the final workspace was not kept")
        root = self.workspace.resolve()
        target = (root / rel).resolve()
        if not target.is_relative_to(root):
            raise CannotEvaluate(f"{rel!r} is outside the workspace")
        return target

    def read(self, rel: str) -> str:
        target = self.path(rel)
        if not target.is_file():
            raise AssertionError(f"{self.cell.id}: the agent left no file {rel!r}")
        return target.read_text(encoding="utf-8", errors="replace")

    def exists(self, rel: str) -> bool:
        return self.path(rel).exists()

    def properties(self) -> dict[str, object]:
        """What travels on the test report (``user_properties``) for the session's report."""
        return {
            "cell": self.cell.id,
            "folder": str(self.folder),
            "result": json.loads(self.result.to_json()),
            "skill": self.skill.to_json() if self.skill else None,
        }
