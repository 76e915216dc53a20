"""Goldens: known-good output compared facet by facet, each with its own tolerance.

A golden is recorded only by an explicit command (``pytest --record-goldens``), never while a
case is graded; comparing against a golden that does not exist raises (it cannot evaluate).
"""

from __future__ import annotations

import difflib
import json
import shutil
from collections.abc import Callable, Collection, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput

GOLDEN_FILE = "golden.json"
ARTIFACT = "artifact"
OWNER_KEY = "_recorded_by"
"""The cell that recorded a golden: one cell owns each golden."""


class GoldenMismatch(AssertionError):
    """One row per facet that is out of tolerance."""


@dataclass(frozen=True)
class Exact:
    def compare(self, got: Any, want: Any) -> str | None:
        return None if got == want else f"got {got!r}, want {want!r}"


@dataclass(frozen=True)
class Superset:
    def compare(self, got: Any, want: Any) -> str | None:
        missing = sorted(set(want) - set(got))
        return f"missing {missing}" if missing else None


@dataclass(frozen=True)
class Jaccard:
    at_least: float

    def compare(self, got: Any, want: Any) -> str | None:
        a, b = set(got), set(want)
        score = len(a & b) / len(a | b) if a | b else 1.0
        if score >= self.at_least:
            return None
        missing, extra = sorted(b - a), sorted(a - b)
        return f"jaccard {score:.2f} < {self.at_least} (missing {missing}, extra {extra})"


@dataclass(frozen=True)
class Ratio:
    at_least: float

    def compare(self, got: Any, want: Any) -> str | None:
        score = difflib.SequenceMatcher(None, str(got), str(want)).ratio()
        return None if score >= self.at_least else f"similarity {score:.2f} < {self.at_least}"


@dataclass(frozen=True)
class Count:
    """A number (or a collection's size) within ``delta`` of the golden's."""

    delta: float = 0

    def compare(self, got: Any, want: Any) -> str | None:
        n, m = _count(got), _count(want)
        return None if abs(n - m) <= self.delta else f"{n:g}, want {m:g} ± {self.delta:g}"


def _count(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | Sized):
        raise CannotEvaluate(f"Count compares numbers or sizes, not {value!r}")
    return float(value) if isinstance(value, int | float) else float(len(value))


@dataclass(frozen=True)
class Within:
    lo: float
    hi: float

    def compare(self, got: Any, want: Any) -> str | None:
        return None if self.lo <= float(got) <= self.hi else f"{got} not in [{self.lo}, {self.hi}]"


Tolerance = Exact | Superset | Jaccard | Ratio | Count | Within


@dataclass(frozen=True)
class Facet:
    name: str
    extract: Callable[[CaseOutput], Any]
    tolerance: Tolerance = Exact()
    why: str = ""


def _as_json(value: Any) -> Any:
    return sorted(value) if isinstance(value, set | frozenset) else value


def record(output: CaseOutput, facets: Collection[Facet], folder: Path) -> Path:
    """Write the golden of these facets from this output (only ``--record-goldens`` calls it),
    with the cell that owns it and the artifact itself: every file the agent's change left,
    under ``artifact/``, so a person can see what the golden was taken from."""
    folder.mkdir(parents=True, exist_ok=True)
    values = {facet.name: _as_json(facet.extract(output)) for facet in facets}
    values[OWNER_KEY] = output.cell.id
    path = folder / GOLDEN_FILE
    path.write_text(json.dumps(values, indent=2, sort_keys=True) + "\n")
    artifact = folder / ARTIFACT
    shutil.rmtree(artifact, ignore_errors=True)
    for rel in output.files_written:
        source = output.path(rel) if output.workspace is not None else None
        if source is not None and source.is_file() and not source.is_symlink():
            target = artifact / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    return path


def compare(output: CaseOutput, facets: Collection[Facet], folder: Path) -> None:
    path = folder / GOLDEN_FILE
    if not path.is_file():
        raise CannotEvaluate(f"no golden at {path}; record one with pytest --record-goldens")
    want = json.loads(path.read_text())
    rows = []
    for facet in facets:
        if facet.name not in want:
            raise CannotEvaluate(f"golden {path} has no facet {facet.name!r}; record it again")
        problem = facet.tolerance.compare(_as_json(facet.extract(output)), want[facet.name])
        if problem:
            rows.append(f"  {facet.name}: {problem}" + (f" ({facet.why})" if facet.why else ""))
    if rows:
        raise GoldenMismatch(f"{output.cell.id}: golden {path} differs:\n" + "\n".join(rows))


def check_golden(output: CaseOutput, facets: Collection[Facet]) -> None:
    """Compare against the case's golden; with ``--record-goldens``, record it instead."""
    if output.golden is None:
        raise CannotEvaluate(f"{output.cell.id}: no golden folder for this case")
    if output.facts.get("record_goldens"):
        record(output, facets, output.golden)
        return
    compare(output, facets, output.golden)
