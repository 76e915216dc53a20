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
    """Fail when any facet is out of tolerance, showing every facet: each one's verdict, how a
    text or list facet differs from the golden (a bounded unified diff, even within tolerance),
    and how the files the agent left differ from the recorded artifact."""
    path = folder / GOLDEN_FILE
    if not path.is_file():
        raise CannotEvaluate(f"no golden at {path}; record one with pytest --record-goldens")
    want = json.loads(path.read_text())
    rows: list[str] = []
    failed = False
    for facet in facets:
        if facet.name not in want:
            raise CannotEvaluate(f"golden {path} has no facet {facet.name!r}; record it again")
        got = _as_json(facet.extract(output))
        problem = facet.tolerance.compare(got, want[facet.name])
        failed = failed or problem is not None
        mark = f"differs: {problem}" if problem else "within tolerance"
        why = f" ({facet.why})" if facet.why else ""
        rows.append(f"  {facet.name} [{type(facet.tolerance).__name__}]: {mark}{why}")
        rows.extend(f"    {line}" for line in facet_diff(got, want[facet.name]))
    if failed:
        rows.extend(artifact_differences(output, folder / ARTIFACT))
        raise GoldenMismatch(f"{output.cell.id}: golden {path} differs:\n" + "\n".join(rows))


DIFF_LINES = 40
"""At most this many lines of one facet's or one file's diff are shown; the rest are counted."""


def facet_diff(got: Any, want: Any) -> list[str]:
    """How a value differs from the golden's: a unified diff of text or of list items; nothing
    for equal values or for scalars (their verdict row already shows both)."""
    if got == want:
        return []
    if isinstance(got, str) and isinstance(want, str):
        return _bounded(_unified(want.splitlines(), got.splitlines(), "golden", "got"))
    if isinstance(got, list) and isinstance(want, list):
        return _bounded(_unified([repr(v) for v in want], [repr(v) for v in got], "golden", "got"))
    return []


def artifact_differences(output: CaseOutput, artifact: Path) -> list[str]:
    """The files the golden was taken from against the files this run left: which are new,
    which are gone, and a diff of each that changed."""
    if not artifact.is_dir() or output.workspace is None:
        return []
    recorded = {p.relative_to(artifact).as_posix() for p in artifact.rglob("*") if p.is_file()}
    now = set(output.files_written)
    rows = ["  artifact (the files the golden was recorded from):"]
    rows += [f"    only in the golden: {rel}" for rel in sorted(recorded - now)]
    rows += [f"    new in this run: {rel}" for rel in sorted(now - recorded)]
    for rel in sorted(recorded & now):
        current = output.path(rel)
        if not current.is_file():
            rows.append(f"    not a file in this run: {rel}")
            continue
        old, new = _text(artifact / rel), _text(current)
        if old is None or new is None:
            if (artifact / rel).read_bytes() != current.read_bytes():
                rows.append(f"    changed (not text): {rel}")
        elif old != new:
            rows.append(f"    changed: {rel}")
            lines = _unified(old.splitlines(), new.splitlines(), f"golden/{rel}", rel)
            rows += [f"      {line}" for line in _bounded(lines)]
    return rows if len(rows) > 1 else []


def _text(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _unified(a: list[str], b: list[str], left: str, right: str) -> list[str]:
    return list(difflib.unified_diff(a, b, left, right, lineterm="", n=1))


def _bounded(lines: list[str]) -> list[str]:
    if len(lines) <= DIFF_LINES:
        return lines
    return [*lines[:DIFF_LINES], f"... {len(lines) - DIFF_LINES} more diff lines"]


def check_golden(output: CaseOutput, facets: Collection[Facet]) -> None:
    """Compare against the case's golden; with ``--record-goldens``, record it instead."""
    if output.golden is None:
        raise CannotEvaluate(f"{output.cell.id}: no golden folder for this case")
    if output.facts.get("record_goldens"):
        record(output, facets, output.golden)
        return
    compare(output, facets, output.golden)
