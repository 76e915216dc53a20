"""Task, Suite and Variant: what agents are asked to do and how it is judged.

The names are imported on first use, so importing one module of the package (its models, say)
does not load the task loader and all it needs."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harnessdrive.tasks.loading import Solution, Suite, Task, load_suite, load_task
    from harnessdrive.tasks.models import GradeSpec, RepoSpec, SuiteSpec, TaskSpec, VariantSpec

_WHERE = {
    "Solution": "loading",
    "Suite": "loading",
    "Task": "loading",
    "load_suite": "loading",
    "load_task": "loading",
    "GradeSpec": "models",
    "RepoSpec": "models",
    "SuiteSpec": "models",
    "TaskSpec": "models",
    "VariantSpec": "models",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'harnessdrive.tasks' has no attribute {name!r}")
    value = getattr(import_module(f"harnessdrive.tasks.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "GradeSpec",
    "RepoSpec",
    "Solution",
    "Suite",
    "SuiteSpec",
    "Task",
    "TaskSpec",
    "VariantSpec",
    "load_suite",
    "load_task",
]
