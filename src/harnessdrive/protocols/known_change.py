"""The ``known-change`` protocol: no agent runs, the job's given change is graded as given.

The grader's self-test grades the untouched repository this way, and mining grades each
commit's parent with and without its gold patch. With no agent there is no workspace to copy
and no setup to run in one (``needs_workspace = False``): the only copy is the grading copy
the grader always makes, and the trial core (trial/core.py) grades it in the worker's sandbox
without the task's per-trial limits, as the self-test and mining have always graded: the
limits' watchdog measures the disk use of the copy over and over, which is costly while a
setup command installs into every copy.

A job of this protocol still names a harness: :data:`NO_AGENT`, a stand-in that is never run.
"""

from __future__ import annotations

from dataclasses import dataclass

from harnessdrive.errors import HarnessError
from harnessdrive.grading.verdict import Verdict
from harnessdrive.harnesses.base import AgentRequest, AgentRun, HarnessInfo
from harnessdrive.protocols.base import (
    GivenChange,
    ProtocolInputs,
    ProtocolOutcome,
    RoundOutcome,
)
from harnessdrive.store.results import Status
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.workspace.changes import Changes

KNOWN_CHANGE = "known-change"


@dataclass(frozen=True)
class NoAgent:
    """The stand-in harness of a known-change job: its change is given; it is never run."""

    @property
    def name(self) -> str:
        return KNOWN_CHANGE

    def info(self) -> HarnessInfo:
        return HarnessInfo(
            name=KNOWN_CHANGE, installed=True, version="builtin", detail=self.__doc__ or ""
        )

    def check_variant(self, variant: VariantSpec) -> None:
        return None

    def run(self, request: AgentRequest) -> AgentRun:
        raise HarnessError("a known change is graded as given, never run")


NO_AGENT = NoAgent()


class KnownChangeProtocol:
    """Grade the job's given change (none: the untouched base state) once, as round 1."""

    name = KNOWN_CHANGE
    needs_workspace = False

    def run(self, inputs: ProtocolInputs) -> ProtocolOutcome:
        given = inputs.change or GivenChange()
        changes = given.changes
        if changes is None:
            tree = inputs.snapshot.tree
            changes = Changes(base_tree=tree, tree=tree, files=(), patch=b"")
        verdict = inputs.grade(changes, 1)
        status: Status = "interrupted" if inputs.stop.stopped else "completed"
        nothing_ran = AgentRun(exit_code=None, timed_out=False, seconds=0.0)
        return ProtocolOutcome.of_round(RoundOutcome(nothing_ran, changes, status, verdict))


def setup_failed(verdict: Verdict) -> bool:
    """Whether the task's setup failed in the grading copy, before any test ran."""
    run = verdict.setup
    return run is not None and (run.exit_code != 0 or run.timed_out)
