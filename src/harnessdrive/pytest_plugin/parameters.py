"""``@pytest.mark.parametrize`` on an eval function: each parameter set is a case of its own.

pytest's own machinery parametrizes Python functions it collects; an eval function is collected
by this plugin, so its ``parametrize`` marks are read here the way pytest reads them (argument
names, values or ``pytest.param(...)`` sets, ``ids=``, stacked marks multiply) and each set
becomes a case whose id carries the set's id. A set's own marks (``pytest.param(...,
marks=...)``) reach its cells, so skipping one set works as in pytest.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from harnessdrive.errors import UserError

_PLAIN = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class ParameterSet:
    id: str
    """The set's id, as pytest would show it (``""`` for an unparametrized case)."""
    values: dict[str, Any] = field(default_factory=dict)
    marks: tuple[pytest.Mark, ...] = ()


def parameter_sets(function: Callable[..., Any]) -> list[ParameterSet]:
    """Every parameter set of ``function``; one empty set when it is not parametrized."""
    marks = [m for m in getattr(function, "pytestmark", ()) if m.name == "parametrize"]
    if not marks:
        return [ParameterSet("")]
    # As pytest: the mark nearest the function comes first in the id and varies slowest.
    expanded = [_one_mark(mark) for mark in marks]
    sets = []
    for combination in itertools.product(*expanded):
        values: dict[str, Any] = {}
        for part in combination:
            values.update(part.values)
        sets.append(
            ParameterSet(
                id="-".join(part.id for part in combination),
                values=values,
                marks=tuple(m for part in combination for m in part.marks),
            )
        )
    seen: dict[str, int] = {}
    unique = []
    for found in sets:
        count = seen.get(found.id, 0)
        seen[found.id] = count + 1
        unique.append(found if not count else ParameterSet(f"{found.id}{count}", found.values))
    return unique


def _one_mark(mark: pytest.Mark) -> list[ParameterSet]:
    args = {**dict(zip(("argnames", "argvalues"), mark.args, strict=False)), **mark.kwargs}
    names = _names(args.get("argnames"))
    values = list(args.get("argvalues", ()))
    ids = args.get("ids")
    found = []
    for index, value in enumerate(values):
        set_id, set_marks = None, ()
        if hasattr(value, "values") and hasattr(value, "marks") and hasattr(value, "id"):
            set_id, set_marks, value = value.id, tuple(value.marks), value.values
            value = value if len(names) > 1 else value[0]
        row = tuple(value) if len(names) > 1 else (value,)
        if len(row) != len(names):
            raise UserError(
                f"parametrize: {row!r} has {len(row)} value(s) for {len(names)} name(s) "
                f"{', '.join(names)}"
            )
        if set_id is None and ids is not None:
            set_id = _given_id(ids, index, value)
        if set_id is None:
            set_id = "-".join(_auto_id(name, v, index) for name, v in zip(names, row, strict=True))
        found.append(ParameterSet(str(set_id), dict(zip(names, row, strict=True)), set_marks))
    return found


def _names(argnames: object) -> list[str]:
    if isinstance(argnames, str):
        return [n.strip() for n in argnames.split(",") if n.strip()]
    if isinstance(argnames, Iterable):
        return [str(n) for n in argnames]
    raise UserError(f"parametrize: argument names must be a string or a list, not {argnames!r}")


def _given_id(ids: object, index: int, value: object) -> str | None:
    if callable(ids):
        made = ids(value)
        return None if made is None else str(made)
    if isinstance(ids, Sequence) and index < len(ids) and ids[index] is not None:
        return str(ids[index])
    return None


def _auto_id(name: str, value: object, index: int) -> str:
    if isinstance(value, _PLAIN) and not (isinstance(value, str) and not value):
        return str(value)
    return f"{name}{index}"


def id_part(set_id: str) -> str:
    """A parameter set's id as part of a task id (letters, digits, ``.``, ``_`` and ``-``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", set_id).strip("_") or "_"
