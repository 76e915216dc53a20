"""``@evalcase``: what one eval case asks, attached to its function for collection to find."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

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
) -> Callable[[F], F]:
    """Mark an ``eval_*`` function as a case; it is called with a :class:`CaseOutput` per cell."""
    case = EvalCase(
        task=task,
        task_dir=task_dir,
        fixture=fixture,
        skill=skill,
        models=tuple(models) if models is not None else None,
        treatments=tuple(treatments),
        repeat=repeat,
        golden=golden,
        timeout=timeout,
    )

    def mark(function: F) -> F:
        setattr(function, CASE_ATTRIBUTE, case)
        return function

    return mark


def case_of(function: object) -> EvalCase | None:
    found = getattr(function, CASE_ATTRIBUTE, None)
    return found if isinstance(found, EvalCase) else None
