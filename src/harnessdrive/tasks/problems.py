"""A pydantic validation error of a task or suite file, as one line a person can act on.

Each problem names its key by its path in the file (``grade.command``, ``variants.0.model``),
an unknown key gets the closest known one ("did you mean"), and where a value may take one of
several forms (a harness name or a variant table) only the form the author meant is reported.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from harnessdrive.errors import did_you_mean


@dataclass(frozen=True)
class _Problem:
    where: tuple[str | int, ...]
    """The key's path in the file, without pydantic's names for the forms of a union."""
    kind: str
    message: str
    branch: tuple[tuple[str | int, ...], str] | None
    """Where the value went through a union, and which of its forms this problem is about."""
    known: tuple[str, ...]
    """The keys allowed next to an unknown one."""


def describe_validation_error(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """One line naming each problem and where it is."""
    problems = [_problem(error, model) for error in exc.errors()]
    problems = [p for p in problems if not _other_form(p, problems)]
    lines = []
    for problem in problems:
        where = ".".join(str(part) for part in problem.where) or "top level"
        if problem.kind == "extra_forbidden":
            key = str(problem.where[-1]) if problem.where else ""
            lines.append(f"unknown key '{where}'{did_you_mean(key, problem.known)}")
        elif problem.kind == "missing":
            lines.append(f"missing key '{where}'")
        else:
            lines.append(f"'{where}': {problem.message}")
    return "; ".join(dict.fromkeys(lines))


def _other_form(problem: _Problem, problems: list[_Problem]) -> bool:
    """A "not a string" next to a real problem inside the table form is noise: drop it."""
    if problem.branch is None or not problem.kind.endswith("_type"):
        return False
    at, form = problem.branch
    return any(
        other.branch is not None
        and other.branch[0] == at
        and other.branch[1] != form
        and not other.kind.endswith("_type")
        for other in problems
    )


def _problem(error: Any, model: type[BaseModel] | None) -> _Problem:
    loc: tuple[str | int, ...] = tuple(error["loc"])
    where: list[str | int] = []
    branch = None
    annotation: Any = model
    known: tuple[str, ...] = ()
    for part in loc:
        annotation = _optional(annotation)
        if _is_union(annotation):
            # pydantic names the form it tried (``str``, ``VariantSpec``); that is no key.
            branch = (tuple(where), str(part))
            annotation = next((a for a in get_args(annotation) if _name(a) == part), None)
            continue
        where.append(part)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            # A table read as one of several forms (``[grade]``, by kind) knows all their keys.
            keys = getattr(annotation, "table_keys", None)
            known = tuple(keys()) if callable(keys) else tuple(annotation.model_fields)
            field = annotation.model_fields.get(str(part))
            annotation = field.annotation if field is not None else None
        elif get_origin(annotation) in (tuple, list):
            annotation = get_args(annotation)[0]
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
        else:
            annotation = None
    return _Problem(tuple(where), error["type"], error["msg"], branch, known)


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def _optional(annotation: Any) -> Any:
    """``X | None`` -> ``X``; a union of several types stays as it is."""
    if not _is_union(annotation):
        return annotation
    kept = [a for a in get_args(annotation) if a is not type(None)]
    return _optional(kept[0]) if len(kept) == 1 else annotation


def _name(annotation: Any) -> str:
    return getattr(annotation, "__name__", str(annotation))
