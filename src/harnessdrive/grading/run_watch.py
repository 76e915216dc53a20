"""Around every agent run: the task's grader kind's own hook, and the clocks.

A round (protocols/round.py) runs its agent inside :func:`agent_run_watch`. A grader kind that
implements :class:`~harnessdrive.grading.kinds.base.AgentRunHook` acts there (it may start a
service the agent calls, and say the machinery disturbed the run); generic code never knows
which kind does what. Whatever the kind, a wall clock that jumped against the monotonic clock
during the run makes the round invalid: its timing cannot be trusted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TypeVar

from harnessdrive.grading.kinds.base import AgentRunHook, RunWatch, grader_kind
from harnessdrive.sandbox.clock import now
from harnessdrive.sandbox.runner import Sandbox
from harnessdrive.tasks.loading import Task

CLOCK_JUMP_SECONDS = 60.0
"""A wall clock that moved this much more or less than the monotonic clock: a suspended
machine, a clock step; the run's timing cannot be trusted."""

W = TypeVar("W", bound=RunWatch)


@contextmanager
def agent_run_watch(task: Task, sandbox: Sandbox) -> Iterator[RunWatch]:
    """Around the agent's run of ``task`` in ``sandbox``: its kind's hook, and the clocks."""
    kind = grader_kind(task.spec.grade.kind)
    around: AbstractContextManager[RunWatch] = (
        kind.around_agent_run(task, sandbox)
        if isinstance(kind, AgentRunHook)
        else nullcontext(RunWatch())
    )
    with clocked(around) as watch:
        yield watch


@contextmanager
def clocked(around: AbstractContextManager[W]) -> Iterator[W]:
    """``around``'s watch, disturbed when the wall clock jumped while it was entered."""
    wall, mono = time.time(), now()
    with around as watch:
        try:
            yield watch
        finally:
            jump = abs((time.time() - wall) - (now() - mono))
            if jump > CLOCK_JUMP_SECONDS:
                watch.disturbed(f"the wall clock jumped {jump:.0f}s during the agent's run")
