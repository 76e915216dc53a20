"""One round of any protocol: the agent works in its workspace, its change is taken, graded."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from harnessdrive.errors import ChangeError, GradingError, HarnessdriveError, SetupFailedError
from harnessdrive.grading.claims import invalid_verdict, with_claims
from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.run_watch import agent_run_watch
from harnessdrive.grading.taxonomy import side_of
from harnessdrive.grading.verdict import Finding, SetupRun, Verdict
from harnessdrive.harnesses.base import AgentRequest, AgentRun, Harness
from harnessdrive.protocols import phases
from harnessdrive.protocols.base import RoundOutcome
from harnessdrive.protocols.stages import stage
from harnessdrive.sandbox.process import StopToken
from harnessdrive.store.results import Status
from harnessdrive.workspace.changes import Changes, capture_changes
from harnessdrive.workspace.snapshot import Snapshot

MIB = 1024 * 1024


def run_round(
    harness: Harness,
    request: AgentRequest,
    base: Snapshot,
    grade_change: Callable[[Changes], Verdict],
    *,
    diff_path: Path,
    stop: StopToken | None,
) -> RoundOutcome:
    """The agent's run on ``request``, its change against ``base`` (kept at ``diff_path``) and
    the verdict, unless the run never got to work or was stopped."""
    phases.phase("agent")
    with stage(f"harness {harness.name}"), agent_run_watch(request.task, request.sandbox) as watch:
        agent = harness.run(replace(request, services={**request.services, **watch.env}))
    max_file_bytes = request.task.spec.limits.diff_file_mb * MIB
    with stage("change capture"):
        try:
            changes = capture_changes(base, request.workspace, max_file_bytes=max_file_bytes)
        except ChangeError as exc:
            return _unreadable_change(agent, base, exc)
        diff_path.write_bytes(changes.patch)
    status = agent_status(agent)
    if status in ("interrupted", "could_not_run"):
        ungraded = Verdict(outcome="not_graded")
        return RoundOutcome(agent_with_evidence(agent), changes, status, ungraded)
    if watch.problem is not None:  # the machinery disturbed the run: invalid, never scored
        return RoundOutcome(agent, changes, status, invalid_verdict(watch.problem))
    verdict = with_claims(grade_change(changes), agent.transcript.final_message, request.task)
    if stop is not None and stop.stopped:
        return RoundOutcome(agent, changes, "interrupted", Verdict(outcome="not_graded"))
    return RoundOutcome(agent, changes, status, verdict)


def graded(setup: GradingSetup, changes: Changes) -> Verdict:
    """The verdict, with what was left out of the change; a machinery failure says which."""
    left_out = tuple(
        Finding(code=item.code, path=item.path, detail=item.detail) for item in changes.left_out
    )
    try:
        verdict = grade(setup, changes)
    except HarnessdriveError as exc:  # which side it falls on: grading/taxonomy.py
        if side_of(exc).grading == "fail":
            return Verdict(outcome="fail", left_out=(*left_out, _unreadable(exc)), error=str(exc))
        verdict = _machinery_verdict(setup, exc)
    return verdict.model_copy(update={"left_out": (*left_out, *verdict.left_out)})


def _machinery_verdict(setup: GradingSetup, exc: HarnessdriveError) -> Verdict:
    """A grading the machinery could not finish: ``not_graded``, saying which step failed. A
    failed setup is recorded as one (its exit code stays in the log the message names)."""
    if isinstance(exc, SetupFailedError):
        commands = tuple(setup.task.spec.setup.commands)
        failed = SetupRun(commands=commands, exit_code=None, timed_out=False, seconds=0.0)
        return Verdict(outcome="not_graded", setup=failed, error=f"grading setup failed: {exc}")
    what = "grading failed" if isinstance(exc, GradingError) else "grading machinery failed"
    return Verdict(outcome="not_graded", error=f"{what}: {exc}")


def _unreadable_change(agent: AgentRun, snapshot: Snapshot, exc: ChangeError) -> RoundOutcome:
    """What the agent left cannot be read as a change: its fail, never "not counted"."""
    empty = Changes(base_tree=snapshot.tree, tree=snapshot.tree, files=(), patch=b"")
    status = agent_status(agent)
    if status in ("interrupted", "could_not_run"):
        ungraded = Verdict(outcome="not_graded")
        return RoundOutcome(agent_with_evidence(agent), empty, status, ungraded)
    verdict = Verdict(outcome="fail", left_out=(_unreadable(exc),), error=str(exc))
    return RoundOutcome(agent, empty, status, verdict)


def _unreadable(exc: HarnessdriveError) -> Finding:
    return Finding(code="unreadable-change", detail=str(exc))


def agent_with_evidence(agent: AgentRun) -> AgentRun:
    """The run, its error leading with what the proxy saw when no model answered."""
    traffic = agent.traffic
    if traffic is None or traffic.reached_model:
        return agent
    seen = traffic.why_not_reached()
    if agent.error and seen not in agent.error:
        seen = f"{seen}; it printed: {agent.error}"
    return replace(agent, error=seen)


def agent_status(agent: AgentRun) -> Status:
    """What happened to the machinery, apart from what the tests say.

    Only evidence from outside the sandbox may say the agent never got to work: the harness
    knew before its process started (no executable, an unusable version, an unset key), or
    harnessdrive's proxy saw no model answer at all (no request, or only refusals: a key
    turned away, a provider refusing for load). A run in which a model answered is graded,
    whatever it exited with and whatever it printed; one stopped by a sandbox limit did work:
    it ``crashed``. A run whose traffic did not go through the proxy (``agent.traffic`` is
    None) has no such evidence, so it is graded too, unless a scripted agent of harnessdrive's
    own declares it never ran.
    """
    if agent.stopped:
        return "interrupted"
    if agent.limit is not None:
        return "crashed"  # it worked until a sandbox limit stopped it: graded, never retried
    if agent.could_not_run:
        return "could_not_run"
    if agent.traffic is not None and not agent.traffic.reached_model:
        return "could_not_run"
    if agent.timed_out:
        return "timeout"
    return "completed" if agent.exit_code == 0 else "crashed"
