"""A trial the machinery failed or abandoned, as recorded: never the agent's failure.

The trial core records an exception that escapes a trial here, the local executor an exception
that escapes the trial core (out of memory, say), and the driver a trial whose executor never
answered after a stop. Which exceptions are the machinery's is grading/taxonomy.py's rule.
"""

from __future__ import annotations

from harnessdrive.accounting.trial_cost import NO_MODEL
from harnessdrive.grading.taxonomy import side_of
from harnessdrive.protocols.stages import StageFailed, describe
from harnessdrive.store.results import AgentSummary, RoundRecord, Timing, TrialResult
from harnessdrive.store.store import utc_now


def machinery_failure(
    identity: TrialResult, exc: BaseException, seconds: float | None = None
) -> TrialResult:
    """``identity`` recorded as ``could_not_run``: the error says which piece of machinery
    failed (protocols/stages.py) and how (``exc`` alone, never its traceback)."""
    row = side_of(exc)
    error = str(exc) if isinstance(exc, StageFailed) else f"internal error: {describe(exc)}"
    what = exc.stage if isinstance(exc, StageFailed) else "the trial machinery"
    update: dict[str, object] = {
        "status": "could_not_run",
        "finished": utc_now(),
        "rounds": (RoundRecord(status="could_not_run", agent=AgentSummary(error=error[:2000])),),
        "note": f"an infrastructure failure ({what}); not counted against the harness",
    }
    if row.side != "machinery":  # an agent-side error that reached the trial boundary
        update["note"] = f"an error of the agent's data escaped grading ({what}); not counted"
    if seconds is not None:
        update["seconds"] = Timing(total=round(seconds, 3))
    return identity.revised(**update)


def abandoned(identity: TrialResult) -> TrialResult:
    """``identity`` recorded as interrupted: the run was stopped and its executor never handed
    the trial back."""
    return identity.revised(
        status="interrupted",
        outcome="not_graded",
        finished=utc_now(),
        cost=identity.cost or NO_MODEL,
        note="the run was stopped and this trial never came back from its executor",
    )
