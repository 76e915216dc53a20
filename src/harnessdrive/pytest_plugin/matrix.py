"""Cells: a case's matrix (from one of three scopes) × treatments × repeats, each one trial.

A matrix entry is ``harness[/model[/effort]]`` or a variant table. The scope that applied (the
case's ``models=``, the ``harnessdrive_matrix`` ini key, or the plugin's default) is named in the
report header. Effort is resolved against the harness's own ladder here, at collection, so a
node id, a result and a report row all carry the rung that was sent; ``min``/``mid``/``max``
name a position on that ladder (:mod:`harnessdrive.matrix`). A treatment is the matrix's own
(a folder of instruction files, each harness given its own), beside its control.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from harnessdrive.accounting.catalogue import Catalogue
from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.harnesses.ladder import ALIASES
from harnessdrive.harnesses.registry import harness_entry
from harnessdrive.matrix.effort import resolve_effort
from harnessdrive.pytest_plugin.case import EvalCase, MatrixEntry
from harnessdrive.tasks.matrix_models import TreatmentSpec
from harnessdrive.tasks.models import VariantSpec

DEFAULT_MATRIX: tuple[str, ...] = ("claude/claude-sonnet-4-5", "codex/gpt-5.5")
"""The plugin's default when the catalogue has no model of a line: one model per CLI with
skills; a case or the ini key narrows or widens it (the forecast says what it costs first)."""
DEFAULT_LINES: tuple[tuple[str, str, int], ...] = (
    ("claude", "anthropic", 2),
    ("codex", "openai", 2),
)
"""The default matrix by catalogue: each CLI with skills on its provider's newest tier-2 model."""


def default_matrix(catalogue: Catalogue, priced: Collection[str]) -> tuple[str, ...]:
    """One current model per CLI with skills: the newest priced tier-2 model of the catalogue."""
    entries = []
    for (harness, provider, tier), fallback in zip(DEFAULT_LINES, DEFAULT_MATRIX, strict=True):
        newest = catalogue.newest(provider, tier, among=priced)
        entries.append(f"{harness}/{newest.model}" if newest is not None else fallback)
    return tuple(entries)


CONTROL = "control"


@dataclass(frozen=True)
class Scope:
    name: str
    """``case``, ``ini`` or ``default``."""
    entries: tuple[MatrixEntry, ...]


def scope_for(
    case: EvalCase, ini_lines: Sequence[str], default: tuple[str, ...] = DEFAULT_MATRIX
) -> Scope:
    if case.models is not None:
        return Scope("case", case.models)
    lines = tuple(ini_entry(line.strip()) for line in ini_lines if line.strip())
    if lines:
        return Scope("ini", lines)
    return Scope("default", default)


def ini_entry(line: str) -> MatrixEntry:
    """A line of the ``harnessdrive_matrix`` ini key: ``harness/model[/effort]``, or a variant
    table written as a TOML inline table (``{harness = "claude", name = "local", ...}``)."""
    if not line.startswith("{"):
        return line
    try:
        table = tomllib.loads(f"entry = {line}")["entry"]
    except tomllib.TOMLDecodeError as exc:
        raise UserError(
            f"harnessdrive_matrix: {line!r} is not a TOML inline table ({exc})"
        ) from None
    return cast("MatrixEntry", table)


@dataclass(frozen=True)
class Cell:
    """One pytest item: a variant (harness, model, resolved effort), a treatment, a repetition."""

    variant: VariantSpec
    treatment: str | None
    repetition: int
    repeats: int
    base: str
    """The entry as a node id names it: ``harness/model/effort``, or a variant table's name."""

    @property
    def id(self) -> str:
        """``claude/sonnet/high+treatment#2`` (``#n`` only when the case repeats)."""
        text = self.base
        if self.treatment:
            text += f"+{self.treatment}"
        if self.repeats > 1:
            text += f"#{self.repetition}"
        return text

    @property
    def arm(self) -> str:
        """The cell without its repetition: what a forecast's history and a report row group by."""
        return self.id.split("#", 1)[0]


def ladder(harness: str) -> tuple[str, ...]:
    ladder = harness_entry(harness).efforts
    return ladder.rungs if ladder is not None else ()


def resolve(variant: VariantSpec, entry: str) -> VariantSpec:
    """The variant with its effort resolved on its harness's ladder (an alias by position); a
    rung the harness lacks is refused, naming the entry."""
    try:
        return resolve_effort(variant, harness_entry(variant.harness))
    except UserError as exc:
        raise UserError(f"matrix entry {entry!r}: {exc}") from None


def parse_entry(entry: MatrixEntry, harness_of: Any) -> VariantSpec:
    """An entry as a variant, its effort resolved; ``harness_of(name)`` finds the harness."""
    if isinstance(entry, Mapping):
        table = dict(entry)
        where = repr(table.get("harness", table))
        try:
            variant = VariantSpec.model_validate(table)
        except ValueError as exc:
            first = str(exc).splitlines()
            raise UserError(f"matrix entry {where}: {first[-1] if first else exc}") from None
        harness_of(variant.harness)
        return resolve(variant, where)
    text = entry.strip()
    if not text:
        raise UserError("empty matrix entry")
    name, _, rest = text.partition("/")
    harness_of(name)
    model: str | None = rest or None
    effort: str | None = None
    if model and "/" in model:
        head, _, last = model.rpartition("/")
        # The last part is an effort when it names a rung or an alias; a model id may hold '/'.
        if last in ALIASES or last in ladder(name) or _looks_like_effort(last):
            model, effort = head, last
        else:
            _refuse_effort_typo(text, name, last)
    return resolve(VariantSpec(harness=name, model=model, effort=effort), text)


_EFFORT_WORDS = {"off", "none", "minimal", "low", "medium", "high", "xhigh", "max"}


def _looks_like_effort(word: str) -> bool:
    return word in _EFFORT_WORDS


def _refuse_effort_typo(text: str, harness: str, last: str) -> None:
    """``claude/claude-sonnet-4-5/hihg`` is an effort typo, not a model id with a '/': say so
    (it would otherwise be refused as an unpriced model, with advice to add a price row)."""
    rungs = [*ladder(harness), *ALIASES]
    hint = did_you_mean(last, [*rungs, *_EFFORT_WORDS])
    if hint:
        raise UserError(
            f"{text}: {last!r} is not an effort of {harness}{hint}; its rungs are "
            f"{', '.join(ladder(harness)) or 'none'} (and the aliases {', '.join(ALIASES)})"
        )


def variant_name(variant: VariantSpec, treatment: str | None) -> str:
    """A result label for the arm that the store accepts (letters, digits, '.', '_', '-')."""
    if variant.name and treatment is None:
        return variant.name
    parts = [variant.name or variant.harness, variant.model or "", variant.effort or ""]
    text = "_".join(p for p in parts if p)
    if treatment:
        text += f"__{treatment}"
    return re.sub(r"[^A-Za-z0-9._-]", "-", text)[:100]


def expand(
    variants: Sequence[VariantSpec], treatments: Sequence[str], repeat: int, folder: Path
) -> list[Cell]:
    """Every cell: each variant under the control and each treatment (``folder/<name>``),
    ``repeat`` times."""
    if repeat < 1:
        raise UserError(f"repeat must be at least 1, not {repeat}")
    arms: list[str | None] = [None, *treatments]
    cells = []
    for variant in variants:
        base = variant.name or "/".join(
            p for p in (variant.harness, variant.model, variant.effort) if p
        )
        for treatment in arms:
            spec = (
                None
                if treatment is None
                else TreatmentSpec(name=treatment, folder=str(folder / treatment))
            )
            named = variant.model_copy(
                update={"name": variant_name(variant, treatment), "treatment": spec}
            )
            for rep in range(1, repeat + 1):
                cells.append(Cell(named, treatment, rep, repeat, base))
    return cells


def selected(
    cell: Cell,
    harnesses: Sequence[str],
    models: Sequence[str],
    efforts: Sequence[str],
    treatments: Sequence[str],
) -> bool:
    """The narrowing options: ``--harness``, ``--model`` (a substring), ``--effort``,
    ``--treatment`` (``control`` or a name)."""
    v = cell.variant
    if harnesses and v.harness not in harnesses:
        return False
    if models and not any(m in (v.model or "") or m == cell.arm for m in models):
        return False
    if efforts and (v.effort or "") not in efforts:
        return False
    return not treatments or (cell.treatment or CONTROL) in treatments
