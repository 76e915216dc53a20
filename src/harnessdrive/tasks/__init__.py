"""Task, Suite and Variant: what agents are asked to do and how it is judged."""

from harnessdrive.tasks.loading import Solution, Suite, Task, load_suite, load_task
from harnessdrive.tasks.models import GradeSpec, RepoSpec, SuiteSpec, TaskSpec, VariantSpec

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
