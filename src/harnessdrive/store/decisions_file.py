"""A run-until-decided run's decisions, ``decisions/<run_id>.json``, for the report to show.

Written atomically by the run driver whenever a comparison is decided and when the run ends.
It is derived from the recorded trials (stats/sequential_design.py) and can always be written
again from them; the rules it holds are those the comparison was started with, so that a later
run of the same arms on the same suite cannot quietly test at another margin or confidence
after looking at the data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from harnessdrive.errors import UserError
from harnessdrive.store.atomic import write_atomic
from harnessdrive.store.schema import refuse_newer

DECISIONS_SCHEMA = "harnessdrive-decisions-1"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class DecisionRules(_Model):
    method: Literal["betting-confidence-sequence"] = "betting-confidence-sequence"
    """Waudby-Smith and Ramdas's hedged capital process on each pair's round differences."""
    multiplicity: Literal["bonferroni"] = "bonferroni"
    confidence: float
    margin: float | None
    max_repeats: int


class PairDecision(_Model):
    first: str
    second: str
    verdict: Literal["better", "worse", "equivalent", "inconclusive"] | None
    """The first arm against the second; None while open."""
    difference: float
    """first - second: the mean per-task pass-rate difference from the trials read."""
    lower: float
    upper: float
    """The confidence sequence when decided (or now), at the pair's Bonferroni level, rounded
    outwards to hundredths."""
    trials: int
    """Trials read, both arms, up to the decision."""
    usd: float
    reason: str = ""
    fixed_design_passes: int | None = None
    """Times a fixed design would run each arm on each task for the same power."""
    fixed_design_trials: int | None = None
    fixed_design_usd: float | None = None
    """What a fixed design of the same power would have cost, estimated from the pair's data."""

    def line(self) -> str:
        """The decision in one line, with what it took (what ``run`` prints as it is made)."""
        took = f"after {self.trials} trials (${self.usd:.2f})"
        if self.verdict is None:
            return f"Open: {self.first} vs {self.second} {took}."
        if self.verdict == "inconclusive":
            return f"Inconclusive: {self.first} vs {self.second} {took}; {self.reason}."
        relation = "equivalent to" if self.verdict == "equivalent" else f"{self.verdict} than"
        interval = f"{self.difference:+.2f} [{self.lower:+.2f}, {self.upper:+.2f}]"
        line = f"Decided: {self.first} {relation} {self.second}, {interval} {took}"
        if self.fixed_design_trials is not None and self.fixed_design_usd is not None:
            line += (
                f"; a fixed design of the same power: about {self.fixed_design_trials} trials "
                f"(${self.fixed_design_usd:.2f})"
            )
        return line + "."


class DecisionsFile(_Model):
    schema_: str = Field(default=DECISIONS_SCHEMA, alias="schema")
    run_id: str
    suite_id: str
    """The suite's identity (tasks/identity.py): with ``arms``, what was compared."""
    arms: tuple[str, ...]
    rules: DecisionRules
    tasks: int
    pairs: tuple[PairDecision, ...]
    trials: int
    """Trials recorded for the run so far (every arm, every task)."""
    usd: float
    finished: bool = False

    def lines(self) -> list[str]:
        """Every pair's line, for a report to show under its scoreboard."""
        return [pair.line() for pair in self.pairs]

    def write(self, path: Path) -> None:
        write_atomic(path, self.model_dump_json(by_alias=True, indent=2) + "\n")


def all_decisions(folder: Path) -> list[DecisionsFile]:
    """Every decisions file in ``folder`` (``decisions/`` of a results folder)."""
    found = (read_decisions(path) for path in sorted(folder.glob("*.json")))
    return [each for each in found if each is not None]


def read_decisions(path: Path) -> DecisionsFile | None:
    """The decisions recorded at ``path``; None when there are none yet."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise UserError(f"cannot read {path}: {error}") from error
    refuse_newer(data, DECISIONS_SCHEMA, path)
    return DecisionsFile.model_validate(data)
