"""``[grade]`` as a tagged union on ``kind``: each registered grader kind brings its table.

Grader kinds are registered through the ``harnessdrive_grader_kinds`` hook (built-ins and
plugins alike); this module needs only their names and table models, so the task format does not
depend on the grading code.
"""

from __future__ import annotations

from typing import Any, Protocol, Union, runtime_checkable

from pydantic import Field, create_model
from pydantic_core import PydanticCustomError

from harnessdrive.errors import PluginError, did_you_mean
from harnessdrive.plugins.registry import registrations
from harnessdrive.tasks.models import DEFAULT_GRADER_KIND, GradeSpec, TaskSpec

GRADER_KINDS_HOOK = "harnessdrive_grader_kinds"


@runtime_checkable
class DeclaresGradeTable(Protocol):
    """What the task format reads of a registered grader kind."""

    @property
    def name(self) -> str: ...

    @property
    def spec_model(self) -> type[GradeSpec]: ...


def grade_tables() -> dict[str, type[GradeSpec]]:
    """The ``[grade]`` table model of every registered grader kind, by kind name."""
    tables: dict[str, type[GradeSpec]] = {}
    # Each registration is checked against the (runtime-checkable) protocol itself.
    found = registrations(GRADER_KINDS_HOOK, DeclaresGradeTable)  # type: ignore[type-abstract]
    for name, entry in found.items():
        model = entry.spec_model
        if not (isinstance(model, type) and issubclass(model, GradeSpec)):
            raise PluginError(f"grader kind {name!r}: its spec_model is not a GradeSpec subclass")
        field = model.model_fields["kind"]
        if field.default != name:
            raise PluginError(
                f"grader kind {name!r}: its spec_model's 'kind' must default to {name!r}"
            )
        tables[name] = model
    return tables


def grade_spec_of_kind(value: Any) -> Any:
    """A ``[grade]`` table read as the table of the kind it names; other values pass through
    for pydantic to refuse."""
    if isinstance(value, GradeSpec) or not isinstance(value, dict):
        return value
    kind = value.get("kind", DEFAULT_GRADER_KIND)
    tables = grade_tables()
    model = tables.get(kind) if isinstance(kind, str) else None
    if model is None:
        known = ", ".join(repr(name) for name in tables) or "none"
        hint = did_you_mean(kind, tuple(tables)) if isinstance(kind, str) else ""
        raise PydanticCustomError(
            "unknown_grader_kind",
            "unknown grader kind {kind}{hint}; registered kinds: {known}",
            {"kind": repr(kind), "hint": hint, "known": known},
        )
    return model.model_validate(value)


def published_task_model() -> type[TaskSpec]:
    """``TaskSpec`` with ``grade`` as the union of every registered kind's table, told apart
    by ``kind``: the form ``harnessdrive schema task`` publishes. (Loading reads the same
    tables through :func:`grade_spec_of_kind`, which also lets ``kind`` be left out.)"""
    tables = tuple(grade_tables().values())
    if not tables:
        raise PluginError("no grader kind is registered")
    union: Any = Union[tables]  # noqa: UP007 (a union built from a tuple of tables)
    return create_model(
        "TaskSpec",
        __base__=TaskSpec,
        __doc__=TaskSpec.__doc__,
        grade=(union, Field(discriminator="kind")),
    )
