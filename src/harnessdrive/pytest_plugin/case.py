"""``@evalcase``: what one eval case asks, attached to its function for collection to find."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

CASE_ATTRIBUTE = "__harnessdrive_evalcase__"

MatrixEntry = str | Mapping[str, Any]
"""``harness[/model[/effort]]``, or a variant table (``harness``, ``model``, ``effort``,
``options``, ``name``) for settings a line cannot say (an endpoint, a scripted agent's calls)."""


@dataclass(frozen=True)
class EvalCase:
    """One case: a prompt (or a harnessdrive task folder) and what it runs against."""

    task: str | None = None
    """What a user types (after naming the skill, when there is one)."""
    task_dir: str | None = None
    """A harnessdrive task folder (its prompt, repository, hidden files and grader), relative
    to the eval file."""
    fixture: str | None = None
    """The starting files of an inline case: ``fixtures/<name>`` beside the eval file, or a
    path relative to it."""
    skill: str | None = None
    """A skill folder (holding SKILL.md) by name or path; its ``evals/`` never reaches the
    agent."""
    models: tuple[MatrixEntry, ...] | None = None
    """The case's own matrix; it wins over the ini key and the default."""
    treatments: tuple[str, ...] = ()
    """Treatments swept beside the control: folders under ``treatments/`` beside the eval file."""
    repeat: int = 1
    golden: str | None = None
    """The golden's name under ``goldens/`` (default: the fixture's name)."""
    timeout: float | None = None
    """The agent's time limit in seconds (default: the task's)."""
    problem: str | None = None
    """What is wrong with the decorator's arguments; collection reports it in one line."""


F = TypeVar("F", bound=Callable[..., Any])


def evalcase(
    task: str | None = None,
    *,
    task_dir: str | None = None,
    fixture: str | None = None,
    skill: str | None = None,
    models: Sequence[MatrixEntry] | None = None,
    treatments: Sequence[str] = (),
    repeat: int = 1,
    golden: str | None = None,
    timeout: float | None = None,
    **unknown: object,
) -> Callable[[F], F]:
    """Mark an ``eval_*`` function as a case; it is called with a :class:`CaseOutput` per cell.

    Wrong arguments do not raise here (pytest would show the eval file's import traceback):
    the case carries the problem, and collection reports it as one line."""
    problem = argument_problem(
        task=task,
        task_dir=task_dir,
        fixture=fixture,
        skill=skill,
        models=models,
        treatments=treatments,
        repeat=repeat,
        golden=golden,
        timeout=timeout,
        unknown=unknown,
    )
    case = EvalCase(
        task=task if isinstance(task, str) else None,
        task_dir=task_dir,
        fixture=fixture,
        skill=skill,
        models=tuple(models) if models is not None and problem is None else None,
        treatments=tuple(treatments) if problem is None else (),
        repeat=repeat if problem is None else 1,
        golden=golden,
        timeout=timeout,
        problem=problem,
    )

    def mark(function: F) -> F:
        setattr(function, CASE_ATTRIBUTE, case)
        return function

    bare: object = task
    if callable(bare):
        # ``@evalcase`` without its parentheses: mark the function so collection says so.
        return cast("Callable[[F], F]", mark(cast(Any, bare)))
    return mark


_ARGUMENTS = (
    "task",
    "task_dir",
    "fixture",
    "skill",
    "models",
    "treatments",
    "repeat",
    "golden",
    "timeout",
)


def argument_problem(
    *,
    task: object,
    task_dir: object,
    fixture: object,
    skill: object,
    models: object,
    treatments: object,
    repeat: object,
    golden: object,
    timeout: object,
    unknown: Mapping[str, object],
) -> str | None:
    """The first thing wrong with ``@evalcase``'s arguments, as a sentence; None when fine."""
    if unknown:
        names = ", ".join(sorted(unknown))
        hints = [
            f"{name} (did you mean {close[0]}?)"
            for name in sorted(unknown)
            if (close := difflib.get_close_matches(name, _ARGUMENTS, n=1))
        ]
        return f"@evalcase got unknown argument(s) {names}" + (
            f"; {', '.join(hints)}" if hints else f"; it takes {', '.join(_ARGUMENTS)}"
        )
    if callable(task):
        return "use @harnessdrive.evalcase(...) with its arguments, not bare @evalcase"
    for name, value in (
        ("task", task),
        ("task_dir", task_dir),
        ("fixture", fixture),
        ("skill", skill),
        ("golden", golden),
    ):
        if value is not None and not (isinstance(value, str) and value.strip()):
            return f"@evalcase {name}= must be a non-empty string, not {value!r}"
    if isinstance(golden, str) and (Path(golden).name != golden or golden in (".", "..")):
        return f"@evalcase golden= is a name under goldens/, not a path: {golden!r}"
    if models is not None:
        if isinstance(models, str | bytes) or not isinstance(models, Sequence):
            return f"@evalcase models= must be a list of matrix entries, not {models!r}"
        for entry in models:
            if not isinstance(entry, str | Mapping):
                return (
                    "@evalcase models=: an entry is 'harness/model[/effort]' or a table, "
                    f"not {entry!r}"
                )
        if not models:
            return "@evalcase models= is empty: name at least one cell, or leave it out"
    if isinstance(treatments, str | bytes) or not isinstance(treatments, Sequence):
        return f"@evalcase treatments= must be a list of names, not {treatments!r}"
    for name in treatments:
        if not (isinstance(name, str) and name and Path(name).name == name and name != ".."):
            return f"@evalcase treatments=: a folder name under treatments/, not {name!r}"
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        return f"@evalcase repeat= must be a whole number of at least 1, not {repeat!r}"
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        return f"@evalcase timeout= must be a positive number of seconds, not {timeout!r}"
    return None


def case_of(function: object) -> EvalCase | None:
    found = getattr(function, CASE_ATTRIBUTE, None)
    return found if isinstance(found, EvalCase) else None
