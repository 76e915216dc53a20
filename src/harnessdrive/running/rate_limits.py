"""A provider's "too many requests" is not the agent's failure: the trial is tried again.

An agent CLI that meets a rate limit or an overloaded provider after its own retries exits
with an error, and the answer is in its log. When a try ends that way (the agent did not
finish cleanly and its last log lines carry a provider's refusal), the try's files are set
aside under ``retries/N/``, the trial waits with backoff and jitter, and runs again in a fresh
workspace. Each refused try becomes a :class:`RetryEvent` of the result; a trial refused on
every try is recorded as unable to run, never as the agent's failure. What refused tries were
charged still counts toward the spend cap.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path

from harnessdrive.executors.base import RetryPolicy
from harnessdrive.sandbox.process import StopToken
from harnessdrive.store.paths import TrialPaths
from harnessdrive.store.results import RetryEvent, RoundRecord, TrialResult
from harnessdrive.store.store import utc_now

RETRIES_FOLDER = "retries"
TAIL_BYTES = 64 * 1024
"""Only the end of a log is read: a CLI prints the error it gave up on last."""

REFUSAL = re.compile(
    r"rate[_ -]?limit(?:ed|_error| exceeded| reached)"
    r"|overloaded(?:_error)?"
    r"|too many requests"
    r"|resource[_ ]exhausted"
    r"|\b(?:status|code|error|http)[^\n\d]{0,12}(?:429|529)\b"
    r"|\b(?:429|529)\b[^\n]{0,40}(?:too many|rate|overload|exhaust)",
    re.IGNORECASE,
)
"""How the providers' refusals for load read in the CLIs' logs."""


def refusal_seen(result: TrialResult, paths: TrialPaths) -> str | None:
    """The log line that shows the provider refused the last try for load, if it did."""
    if result.status not in ("crashed", "could_not_run", "completed"):
        return None  # a timeout or a stop is not the provider's answer
    agent = result.agent
    if result.status == "completed" and agent.exit_code in (0, None):
        return None  # the agent ended cleanly: whatever it printed was its own business
    texts = [agent.error or ""]
    texts += [_tail(log) for log in (paths.stderr, paths.stdout)]
    for text in texts:
        found = REFUSAL.search(text)
        if found:
            return _line_around(text, found.start(), found.end())
    return None


def with_retries(
    attempt: Callable[[], TrialResult],
    artifacts: Path,
    policy: RetryPolicy,
    stop: StopToken,
    *,
    rng: random.Random | None = None,
) -> TrialResult:
    """Run ``attempt`` (one try writing into ``artifacts``) until a try is not refused for load,
    at most ``policy.tries`` times."""
    rng = rng or random.Random()
    paths = TrialPaths(artifacts)
    events: list[RetryEvent] = []
    earlier_charges = 0.0
    while True:
        result = attempt()
        seen = refusal_seen(result, paths)
        if seen is None or stop.stopped:
            return _with_events(result, events, earlier_charges)
        if len(events) + 1 >= policy.tries:
            events.append(RetryEvent(reason="rate_limited", detail=seen, at=utc_now()))
            return _refused_throughout(_with_events(result, events, earlier_charges))
        pause = policy.pause(len(events) + 1, rng.random())
        events.append(
            RetryEvent(
                reason="rate_limited", detail=seen, waited_seconds=round(pause, 3), at=utc_now()
            )
        )
        earlier_charges += result.cost.charged_usd
        _set_aside(artifacts, len(events))
        if stop.wait(pause):
            return _with_events(result, events, earlier_charges)


def _with_events(result: TrialResult, events: list[RetryEvent], earlier: float) -> TrialResult:
    if not events:
        return result
    cost = result.cost
    if earlier:
        note = f"includes ${earlier:.6f} charged for tries refused by the provider"
        cost = cost.model_copy(
            update={
                "charged_usd": round(cost.charged_usd + earlier, 6),
                "note": f"{cost.note}; {note}" if cost.note else note,
            }
        )
    return result.model_copy(update={"retries": (*result.retries, *events), "cost": cost})


def _refused_throughout(result: TrialResult) -> TrialResult:
    tries = len(result.retries)
    error = f"the provider refused for load on all {tries} tries: {result.retries[-1].detail}"
    last = result.rounds[-1] if result.rounds else RoundRecord(status="could_not_run")
    agent = last.agent.model_copy(update={"error": error})
    rounds = (
        *result.rounds[:-1],
        last.model_copy(update={"status": "could_not_run", "agent": agent}),
    )
    return result.model_copy(
        update={
            "status": "could_not_run",
            "outcome": "not_graded",
            "rounds": rounds,
            "note": "rate-limited by the provider on every try; not counted against the harness",
        }
    )


def _set_aside(artifacts: Path, number: int) -> None:
    """Move a refused try's files out of the way of the next try, keeping them."""
    target = artifacts / RETRIES_FOLDER / str(number)
    target.mkdir(parents=True)
    for entry in list(artifacts.iterdir()):
        if entry.name != RETRIES_FOLDER:
            entry.rename(target / entry.name)


def _tail(path: Path) -> str:
    try:
        with path.open("rb") as file:
            size = file.seek(0, 2)
            file.seek(max(0, size - TAIL_BYTES))
            return file.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _line_around(text: str, start: int, end: int) -> str:
    begin = text.rfind("\n", 0, start) + 1
    stop = text.find("\n", end)
    line = text[begin : stop if stop != -1 else len(text)].strip()
    return line[:300]
