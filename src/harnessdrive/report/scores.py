"""What a report reads from a trial's rounds: its score, and the agent's work summed over rounds.

The last round decides the verdict (its diff and grading are the trial's); time, turns and
tokens are the sums over every round (``totals``), so a trial of several rounds is not shown as
cheap as its last round alone.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from harnessdrive.store.results import TrialResult


def mean_score(results: Sequence[TrialResult]) -> float | None:
    """The mean score of the trials that have one; None when none has."""
    scores = [r.score for r in results if r.score is not None]
    return round(statistics.fmean(scores), 4) if scores else None


def logged_usage(result: TrialResult) -> bool:
    """Whether any round's agent logged model calls (a trial without calls has no token count)."""
    return any(record.agent.calls for record in result.rounds)


def tokens(result: TrialResult) -> int:
    """Tokens over every round, every tier."""
    return result.totals.usage.total


def agent_seconds(result: TrialResult) -> float:
    """The agent's time over every round (a result without totals: its own timing)."""
    return result.totals.agent_seconds if result.totals.rounds else result.seconds.agent
