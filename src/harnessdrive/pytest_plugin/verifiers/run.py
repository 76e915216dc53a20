"""Verifiers of the run itself: that it happened, is bound to its own session log, ended
cleanly and was priced. Start every case with :func:`check_rollout`."""

from __future__ import annotations

from harnessdrive.pytest_plugin.output import CannotEvaluate, CaseOutput


def _uses_model(output: CaseOutput) -> bool:
    return output.result.cost.source != "none"


def check_run_is_real(output: CaseOutput) -> None:
    """The verdict is tied to a session that happened: the trial completed, the agent exited
    cleanly, and (for a harness that runs a model) it made billed model calls recorded in a
    session log that is still in the trial folder."""
    result = output.result
    if result.status != "completed":
        raise AssertionError(f"{output.cell.id}: the trial {result.status}, not completed")
    agent = result.agent
    if agent.error:
        raise AssertionError(f"{output.cell.id}: the agent failed: {agent.error}")
    if not _uses_model(output):
        return  # a harness that runs no model (a scripted agent) has no session to bind
    if agent.calls == 0 or result.totals.usage.total == 0:
        raise AssertionError(
            f"{output.cell.id}: no billed model call was recorded (an invocation the CLI did "
            "not resolve costs nothing and does nothing)"
        )
    transcript = output.transcript
    if transcript.session_log is None:
        # A CLI that keeps no log of its own (Cursor, Goose) is bound by what it printed.
        printed = output.folder / "agent.stdout"
        if not (printed.is_file() and printed.stat().st_size):
            raise AssertionError(f"{output.cell.id}: the run left no session log and no output")
        return
    if not (output.folder / transcript.session_log).is_file():
        raise AssertionError(f"{output.cell.id}: its session log {transcript.session_log} is gone")


def check_run_is_priced(output: CaseOutput) -> None:
    """The run carries a positive price computed from dated price records (or the harness's
    own figure), with the records it used; a harness that runs no model passes."""
    cost = output.result.cost
    if cost.source == "none":
        return
    if cost.source not in ("computed", "reported") or cost.usd is None:
        raise AssertionError(f"{output.cell.id}: the run is not priced (cost {cost.source})")
    if cost.usd <= 0:
        raise AssertionError(f"{output.cell.id}: a priced run cost ${cost.usd}, not above $0")
    if cost.source == "computed" and not cost.prices:
        raise AssertionError(f"{output.cell.id}: the price names no price record it came from")
    if cost.unpriced_models:
        missing = ", ".join(cost.unpriced_models)
        raise AssertionError(f"{output.cell.id}: calls to unpriced models: {missing}")


def check_rollout(output: CaseOutput) -> None:
    """The check every case owes: the run is real and priced."""
    check_run_is_real(output)
    check_run_is_priced(output)


def check_exit_clean(output: CaseOutput) -> None:
    """The agent's process exited with status 0 and reported no error."""
    agent = output.result.agent
    if agent.exit_code is None:
        raise CannotEvaluate(f"{output.cell.id}: the agent's exit status was not recorded")
    if agent.exit_code != 0 or agent.error:
        why = f": {agent.error}" if agent.error else ""
        raise AssertionError(f"{output.cell.id}: the agent exited {agent.exit_code}{why}")


def check_not_timed_out(output: CaseOutput) -> None:
    """The agent finished within its time limit (and was not stopped)."""
    status = output.result.status
    if status in ("timeout", "interrupted"):
        seconds = output.result.seconds.agent
        raise AssertionError(f"{output.cell.id}: the run ended by {status} after {seconds:.0f}s")


def check_no_permission_denials(output: CaseOutput) -> None:
    """The agent never asked for something the sandbox or the CLI's permissions refused."""
    denials = [e.text for e in output.transcript.events if e.text.startswith("permission denied")]
    count = max(output.result.agent.permission_denials, len(denials))
    if count:
        shown = "; ".join(denials[:3]) or f"{count} denial(s)"
        raise AssertionError(f"{output.cell.id}: {count} permission denial(s): {shown}")


def check_no_errors(output: CaseOutput) -> None:
    """The transcript records no error event (an API error, a failed tool, a crash)."""
    errors = [e.text for e in output.transcript.events if e.kind == "error"]
    if errors:
        raise AssertionError(f"{output.cell.id}: {len(errors)} error(s): {'; '.join(errors[:3])}")
