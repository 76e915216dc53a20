"""The single-attempt protocol: the agent works once in a fresh workspace, then is graded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harnessdrive.errors import GradingError, HarnessdriveError
from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.verdict import Verdict
from harnessdrive.harnesses.base import AgentRequest, AgentRun, Harness
from harnessdrive.store.results import Status
from harnessdrive.workspace.changes import Changes, capture_changes
from harnessdrive.workspace.snapshot import Snapshot


@dataclass(frozen=True)
class AttemptOutcome:
    agent: AgentRun
    changes: Changes
    status: Status
    verdict: Verdict


def run_attempt(
    harness: Harness,
    request: AgentRequest,
    snapshot: Snapshot,
    grading: GradingSetup,
    *,
    diff_path: Path,
) -> AttemptOutcome:
    agent = harness.run(request)
    changes = capture_changes(snapshot, request.workspace)
    diff_path.write_bytes(changes.patch)
    status = agent_status(agent, changes)
    if status in ("interrupted", "could_not_run"):
        return AttemptOutcome(agent, changes, status, Verdict(outcome="not_graded"))
    try:
        verdict = grade(grading, changes)
    except GradingError as exc:
        verdict = Verdict(outcome="not_graded", error=str(exc))
    except HarnessdriveError as exc:
        verdict = Verdict(outcome="not_graded", error=f"grading failed: {exc}")
    if grading.stop is not None and grading.stop.stopped:
        return AttemptOutcome(agent, changes, "interrupted", Verdict(outcome="not_graded"))
    return AttemptOutcome(agent, changes, status, verdict)


def agent_status(agent: AgentRun, changes: Changes) -> Status:
    """What happened to the machinery, apart from what the tests say (seed 000's rules).

    A run that did not time out, exited with an error and changed nothing never got to work:
    it ``could_not_run`` and is neither graded nor counted in pass rates. One stopped by a
    sandbox limit (a fork bomb, a disk filler) did work: it ``crashed``.
    """
    if agent.stopped:
        return "interrupted"
    if agent.limit is not None:
        return "crashed"  # it worked until a sandbox limit stopped it: graded, never retried
    if agent.could_not_run:
        return "could_not_run"
    if agent.timed_out:
        return "timeout"
    if agent.exit_code == 0:
        return "completed"
    return "crashed" if changes else "could_not_run"
