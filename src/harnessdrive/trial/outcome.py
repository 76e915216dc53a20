"""A trial's record from what its protocol reported: rounds, timing, totals, the run priced."""

from __future__ import annotations

from harnessdrive.grading.verdict import StreamKept
from harnessdrive.harnesses.base import AgentRun
from harnessdrive.protocols.base import ProtocolOutcome, RoundOutcome
from harnessdrive.proxy.traffic import Traffic
from harnessdrive.store.results import AgentSummary, DiffStats, RoundRecord, Timing


def trial_timing(outcome: ProtocolOutcome, setup_seconds: float, total: float) -> Timing:
    agent = sum(each.agent.seconds for each in outcome.rounds)
    grading = sum(each.verdict.seconds for each in outcome.rounds)
    commands = sum(each.verdict.command_seconds for each in outcome.rounds)
    return Timing(
        setup=round(setup_seconds, 3),
        agent=round(agent, 3),
        grading=round(grading, 3),
        total=round(total, 3),
        overhead=round(max(total - setup_seconds - agent - commands, 0.0), 4),
    )


def round_records(
    outcome: ProtocolOutcome, timing: Timing, setup_seconds: float
) -> tuple[RoundRecord, ...]:
    records = []
    for number, each in enumerate(outcome.rounds, start=1):
        if len(outcome.rounds) == 1:
            seconds = timing  # one round is the whole trial
        else:
            seconds = Timing(
                setup=round(setup_seconds, 3) if number == 1 else 0.0,
                agent=round(each.agent.seconds, 3),
                grading=round(each.verdict.seconds, 3),
                total=round(each.agent.seconds + each.verdict.seconds, 3),
            )
        records.append(
            RoundRecord(
                number=number,
                status=each.status,
                outcome=each.verdict.outcome,
                agent=agent_summary(each.agent),
                diff=DiffStats(
                    files_changed=len(each.changes.files),
                    lines_added=each.changes.lines_added,
                    lines_deleted=each.changes.lines_deleted,
                    paths=each.changes.paths,
                    patch_bytes=each.changes.patch_bytes,
                ),
                grading=each.verdict,
                seconds=seconds,
                note=each.note,
            )
        )
    return tuple(records)


def priced_run(rounds: tuple[RoundOutcome, ...]) -> AgentRun:
    """The run whose calls are priced: the one round, or every round's calls as one run."""
    last = rounds[-1].agent
    if len(rounds) == 1:
        return last
    runs = [each.agent for each in rounds]
    reported = [run.transcript.reported_cost_usd for run in runs]
    transcript = last.transcript.model_copy(
        update={
            "calls": tuple(call for run in runs for call in run.transcript.calls),
            "reported_cost_usd": None if None in reported else sum(r or 0.0 for r in reported),
        }
    )
    return AgentRun(
        exit_code=last.exit_code,
        timed_out=any(run.timed_out for run in runs),
        stopped=any(run.stopped for run in runs),
        seconds=sum(run.seconds for run in runs),
        transcript=transcript,
        error=last.error,
        hint=last.hint,
        could_not_run=last.could_not_run,
        limit=last.limit,
        version=last.version,
        traffic=Traffic.summed([run.traffic for run in runs]),
    )


def agent_summary(agent: AgentRun) -> AgentSummary:
    transcript = agent.transcript
    return AgentSummary(
        exit_code=agent.exit_code,
        error=agent.error,
        hint=agent.hint,
        model=transcript.model,
        turns=transcript.turns,
        tool_calls=transcript.tool_calls,
        calls=len(transcript.calls),
        usage=transcript.usage,
        permission_denials=transcript.permission_denials,
        stdout=StreamKept.of(agent.stdout_record),
        stderr=StreamKept.of(agent.stderr_record),
        traffic=agent.traffic,
    )
