"""Which side each outcome, status and exception falls on: the agent's, or the machinery's.

A trial counts against the agent (it is in every pass rate) unless only evidence from outside
the sandbox says the machinery failed. This module is that rule as data: the grader maps an
exception to a verdict with :func:`side_of` (protocols/round.py), the trial core records a
machinery failure with it (trial/failures.py), and docs/security.md ("The taxonomy") shows
the same tables, which a test compares with these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harnessdrive.errors import (
    AgentDataError,
    ChangeError,
    CouldNotRunError,
    GradingError,
    HarnessdriveError,
    HarnessError,
    SandboxError,
    SetupFailedError,
    WorkspaceError,
)

Side = Literal["agent", "machinery"]


@dataclass(frozen=True)
class Kind:
    """One outcome or status: whether it counts in pass rates, and the evidence it needs."""

    name: str
    counted: bool
    evidence: str


OUTCOMES: tuple[Kind, ...] = (
    Kind("pass", True, "the deciding run passed every hidden test the reference passed, the "
         "witness came out as planted, and no tampering finding"),
    Kind("fail", True, "the tests ran and did not all pass; or what the agent left (its change, "
         "a report or answer its code wrote, a setup that fails only with its change) cannot "
         "be read or used"),
    Kind("tampered", True, "a tampering finding in the change or in the run, whatever the "
         "tests say; counted as a failure"),
    Kind("not_graded", False, "the grader could not evaluate for a reason outside the sandbox: "
         "setup fails on the base state too, the oracle failed, the run was stopped"),
)  # fmt: skip
"""Every ``Verdict.outcome``."""

STATUSES: tuple[Kind, ...] = (
    Kind("completed", True, "the agent's process exited 0"),
    Kind("timeout", True, "the agent's deadline passed; its change is graded"),
    Kind("crashed", True, "the agent exited with an error or hit a sandbox limit after it "
         "worked; its change is graded"),
    Kind("could_not_run", False, "evidence from outside the sandbox: the CLI missing or refused, "
         "setup failed in the base state, or the machinery's own error"),
    Kind("interrupted", False, "the run was stopped (a signal, the driver killed) before the "
         "trial was recorded"),
    Kind("skipped", False, "the schedule never started it (the spend cap, a harness that "
         "cannot run)"),
)  # fmt: skip
"""Every ``TrialResult.status``."""


@dataclass(frozen=True)
class ExceptionSide:
    """Where an exception of ``kind`` (or a subclass) raised while running a trial lands."""

    kind: type[BaseException]
    side: Side
    grading: str
    """What it makes the verdict when raised while grading (``fail``, ``not_graded``), or the
    trial's status when it escapes grading (``could_not_run``)."""
    elsewhere: str
    """What it makes the trial when raised outside grading (the agent's run, setup, recording)."""


_MACHINERY: tuple[Side, str, str] = ("machinery", "not_graded", "could_not_run")

EXCEPTION_SIDES: tuple[ExceptionSide, ...] = (
    ExceptionSide(AgentDataError, "agent", "fail", "fail"),
    ExceptionSide(ChangeError, "agent", "fail", "fail"),
    ExceptionSide(SetupFailedError, *_MACHINERY),
    ExceptionSide(GradingError, *_MACHINERY),
    ExceptionSide(WorkspaceError, *_MACHINERY),
    ExceptionSide(SandboxError, *_MACHINERY),
    ExceptionSide(CouldNotRunError, *_MACHINERY),
    ExceptionSide(HarnessError, *_MACHINERY),
    ExceptionSide(HarnessdriveError, *_MACHINERY),
    ExceptionSide(MemoryError, "machinery", "could_not_run", "could_not_run"),
    ExceptionSide(BaseException, "machinery", "could_not_run", "could_not_run"),
)
"""Most specific first: the first row whose ``kind`` the exception is an instance of decides.
Readers of agent-made data turn what a parser raises into :class:`AgentDataError`
(grading/hostile.py), so only a fault of ours reaches the rows below it; an error that is not
ours by name (a bug, memory running out) escapes grading to the trial boundary."""


def side_of(exc: BaseException) -> ExceptionSide:
    """The row of :data:`EXCEPTION_SIDES` that decides where ``exc`` lands."""
    return next(row for row in EXCEPTION_SIDES if isinstance(exc, row.kind))


def counted(name: str) -> bool:
    """Whether a trial of this outcome or status is in the pass rates."""
    return next(kind.counted for kind in (*OUTCOMES, *STATUSES) if kind.name == name)
