"""``session = "resume"``: an improvement trial's rounds continue one agent session.

Only a harness that declares it can resume a session (``resume_args``, harnesses/base.py) is
asked to: round N+1 then runs under round N's HOME and continues the session id round N's run
reported. A variant that would run a task with ``session = "resume"`` on any other harness is
refused before anything runs, rather than silently starting every round afresh.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harnessdrive.errors import UserError
from harnessdrive.harnesses.base import Harness, can_resume
from harnessdrive.protocols.base import RoundOutcome
from harnessdrive.tasks.improve_models import ImproveSpec
from harnessdrive.tasks.loading import Suite, Task
from harnessdrive.tasks.models import VariantSpec

PROTOCOL = "improve"


def session_mode(task: Task, variant: VariantSpec) -> str | None:
    """``fresh`` or ``resume`` for this task under this variant; None when it runs no rounds."""
    spec = task.spec.improve
    if spec is None or (variant.protocol or task.spec.protocol) != PROTOCOL:
        return None
    override = variant.improve.session if variant.improve is not None else None
    return override or spec.session


def check_sessions(
    suite: Suite, variants: Sequence[VariantSpec], harnesses: Mapping[str, Harness]
) -> None:
    """Refuse a variant whose harness cannot resume on a task that asks it to."""
    for variant in variants:
        if can_resume(harnesses[variant.harness]):
            continue
        for task in suite.tasks:
            if session_mode(task, variant) == "resume":
                raise UserError(
                    f"variant {variant.label!r}: task {task.id!r} asks for session = "
                    f'"resume", but harness {variant.harness!r} cannot resume a session; '
                    'set session = "fresh" (in the task or the variant\'s improve table)'
                )


def session_after(spec: ImproveSpec, harness: object, outcome: RoundOutcome) -> str | None:
    """The session the round after ``outcome`` continues: this round's, when rounds resume,
    the harness can (a plan refuses one that cannot) and the round had one."""
    if spec.session != "resume" or not can_resume(harness):
        return None
    return outcome.agent.transcript.session_id or None
