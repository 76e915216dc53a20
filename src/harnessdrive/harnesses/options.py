"""Typed variant options: every harness declares the pydantic model of its ``options`` table.

A variant's options are checked against that model before anything runs; an unknown or
ill-typed option is one line that names the variant. The same models give the JSON Schema of
the variant tables (:mod:`harnessdrive.harnesses.schema`).
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from harnessdrive.errors import UserError, did_you_mean
from harnessdrive.tasks.models import VariantSpec


class HarnessOptions(BaseModel):
    """Base of the options models: unknown keys are refused, values cannot change later."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    expected: ClassVar[dict[str, str]] = {}
    """What a field must be, in words, for the error when it is not (``"true or false"``)."""


class NoOptions(HarnessOptions):
    """The options of a harness that takes none."""


OptionsT = TypeVar("OptionsT", bound=BaseModel)


def parse_options(model: type[OptionsT], variant: VariantSpec, harness: str) -> OptionsT:
    """``variant.options`` as ``model``; anything wrong is a one-line UserError."""
    try:
        return model.model_validate(variant.options)
    except ValidationError as exc:
        raise UserError(options_problem(exc, model, variant.label, harness)) from None


def options_problem(exc: ValidationError, model: type[BaseModel], label: str, harness: str) -> str:
    """One line saying what is wrong with a variant's options."""
    errors = exc.errors()
    known = sorted(field.alias or name for name, field in model.model_fields.items())
    unknown = sorted(
        str(error["loc"][0])
        for error in errors
        if error["type"] == "extra_forbidden" and len(error["loc"]) == 1
    )
    if unknown and not known:
        return f"variant {label}: {harness} takes no options, got {', '.join(unknown)}"
    if unknown:
        return (
            f"variant {label}: unknown option(s) for {harness}: {', '.join(unknown)}"
            f"{did_you_mean(unknown[0], known)} (known: {', '.join(known)})"
        )
    expected: dict[str, str] = getattr(model, "expected", {})
    problems: dict[str, str] = {}
    for error in errors:
        location = [str(part) for part in error["loc"]]
        top = location[0] if location else ""
        if error["type"] == "missing" and len(location) == 1:
            problems.setdefault(top, f"{harness} needs option {top!r}")
        elif top in expected:
            problems.setdefault(top, f"{top!r} must be {expected[top]}")
        else:
            where = ".".join(location) or "options"
            problems.setdefault(where, f"{where!r}: {_message(error)}")
    return f"variant {label}: " + "; ".join(problems.values())


def _message(error: Any) -> str:
    message = str(error["msg"])
    # A custom check's message arrives as "Value error, <what we said>".
    return message.removeprefix("Value error, ")
