"""A provider's "too many requests" is not the agent's failure: the trial is tried again.

What counts is what harnessdrive's proxy saw (proxy/traffic.py), never what the agent's process
printed: a try whose last model request the provider refused for load (status 429, 503 or 529)
and that did not pass is set aside under ``retries/N/`` with its verdict, and the trial waits
with backoff and jitter and runs again in a fresh workspace. Each try set aside becomes a
:class:`RetryEvent` of the result, with its status and verdict.

A trial is "not counted" only when no try was graded at all: every try's requests were refused
before any model answered. A try graded ``fail`` keeps the trial counted: if the tries after it
never reached a model, the last graded try is the one recorded. What refused tries were charged
still counts toward the spend cap.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from pathlib import Path

from harnessdrive.proxy.traffic import Traffic
from harnessdrive.sandbox.process import StopToken
from harnessdrive.store.results import RetryEvent, RoundRecord, TrialResult
from harnessdrive.store.store import utc_now
from harnessdrive.trial.job import RetryPolicy

RETRIES_FOLDER = "retries"


def refusal_seen(result: TrialResult) -> str | None:
    """What the proxy saw when the provider refused the try's last model request for load,
    if it did and the try did not pass; None otherwise."""
    if result.status in ("interrupted", "skipped") or result.outcome == "pass":
        return None
    traffic = _last_traffic(result)
    if traffic is None or not traffic.refused_for_load:
        return None
    return (
        f"{traffic.upstream} answered the last model request with HTTP {traffic.last_status} "
        f"({traffic.answered} of {traffic.generations} answered)"
    )


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
    events: list[RetryEvent] = []
    aside: list[TrialResult] = []  # the tries set aside, in order: try N is retries/N/
    while True:
        result = attempt()
        seen = refusal_seen(result)
        if seen is None or stop.stopped:
            return _finished(result, aside, events, artifacts)
        event = RetryEvent(
            reason="rate_limited", detail=seen, status=result.status, outcome=result.outcome
        )
        if len(events) + 1 >= policy.tries:
            events.append(event.model_copy(update={"at": utc_now()}))
            return _finished(result, aside, events, artifacts)
        pause = policy.pause(len(events) + 1, rng.random())
        events.append(event.model_copy(update={"waited_seconds": round(pause, 3), "at": utc_now()}))
        aside.append(result)
        _set_aside(artifacts, len(aside))
        if stop.wait(pause):  # stopped while waiting: this try stands as it was
            _bring_back(artifacts, len(aside))
            aside.pop()
            events.pop()
            return _finished(result, aside, events, artifacts)


def _last_traffic(result: TrialResult) -> Traffic | None:
    return result.rounds[-1].agent.traffic if result.rounds else None


def _finished(
    last: TrialResult, aside: list[TrialResult], events: list[RetryEvent], artifacts: Path
) -> TrialResult:
    """The trial after its last try: graded if any try was; "not counted" only if none was."""
    if not events:
        return last
    if last.outcome == "not_graded":
        graded = [n for n, each in enumerate(aside, start=1) if each.outcome != "not_graded"]
        if graded:
            number = graded[-1]
            _set_aside(artifacts, len(aside) + 1)
            _bring_back(artifacts, number)
            kept = aside[number - 1]
            others = [*aside[: number - 1], *aside[number:], last]
            note = (
                f"try {number} is recorded: the tries after it were refused by the provider "
                "before any model answered (their files are under retries/)"
            )
            return _with_events(kept.revised(note=note), events, others)
        if last.status == "could_not_run" and refusal_seen(last) is not None:
            last = _refused_throughout(last, events)
    return _with_events(last, events, aside)


def _with_events(
    result: TrialResult, events: list[RetryEvent], others: list[TrialResult]
) -> TrialResult:
    cost = result.cost
    earlier = round(sum(each.cost.charged_usd for each in others), 6)
    if earlier:
        note = f"includes ${earlier:.6f} charged for tries refused by the provider"
        cost = cost.model_copy(
            update={
                "charged_usd": round(cost.charged_usd + earlier, 6),
                "note": f"{cost.note}; {note}" if cost.note else note,
            }
        )
    return result.revised(retries=(*result.retries, *events), cost=cost)


def _refused_throughout(result: TrialResult, events: list[RetryEvent]) -> TrialResult:
    error = f"the provider refused for load on all {len(events)} tries: {events[-1].detail}"
    last = result.rounds[-1] if result.rounds else RoundRecord(status="could_not_run")
    agent = last.agent.model_copy(update={"error": error})
    rounds = (*result.rounds[:-1], last.model_copy(update={"agent": agent}))
    return result.revised(
        rounds=rounds,
        note="rate-limited by the provider on every try before any model answered; "
        "not counted against the harness",
    )


def _set_aside(artifacts: Path, number: int) -> None:
    """Move a refused try's files out of the way of the next try, keeping them."""
    target = artifacts / RETRIES_FOLDER / str(number)
    target.mkdir(parents=True)
    for entry in list(artifacts.iterdir()):
        if entry.name != RETRIES_FOLDER:
            entry.rename(target / entry.name)


def _bring_back(artifacts: Path, number: int) -> None:
    """Try ``number``'s files back at the top of the trial folder."""
    source = artifacts / RETRIES_FOLDER / str(number)
    for entry in list(source.iterdir()):
        entry.rename(artifacts / entry.name)
    source.rmdir()
    with contextlib.suppress(OSError):
        (artifacts / RETRIES_FOLDER).rmdir()  # only when it is empty
