"""Run-until-decided comparisons: rounds of paired trials read by confidence sequences.

A round is one trial of each arm on every task at the same repetition number. Its observation
for a pair of arms is the mean over tasks of (pass of the first arm - pass of the second): a
number in [-1, 1] whose expectation is exactly the difference of the arms' mean per-task pass
rates, the quantity every view of the report compares, and rounds are independent. Each pair
reads its rounds in repetition order through a :class:`BettingSequence` at level alpha divided
by the number of pairs (Bonferroni: every sequence covers at every time at once with
probability 1 - alpha, so each pair may stop on its own). A pair is decided the first round its
sequence decides, and the decision is final.

Everything here is a function of the outcomes it is given: the same records give the same
decisions, in whatever order they were recorded and however often the run was stopped.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from harnessdrive.stats.sequential import BettingSequence, SequentialVerdict, decide, tracked_points

PairVerdict = Literal["better", "worse", "equivalent", "inconclusive"]

POWER_RESAMPLES = 200
"""Replays of the test on resampled rounds that estimate its power for the fixed-design cost."""

POWER_CAP = 0.99
"""Power above this is taken as this much: a fixed design for certainty has no finite size."""


@dataclass(frozen=True)
class DecisionSettings:
    confidence: float = 0.95
    margin: float | None = None
    """Arms within +-margin of each other are ``equivalent``; None: never equivalent."""
    max_repeats: int = 10
    """Rounds at most; a pair still open after them is ``inconclusive``."""

    @property
    def alpha(self) -> float:
        return 1 - self.confidence


@dataclass(frozen=True)
class Outcome:
    passed: bool
    usd: float = 0.0


OutcomeOf = Callable[[str, str, int], Outcome | None]
"""(arm, task, repetition) -> the standing outcome of that trial, or None when there is none."""


@dataclass(frozen=True)
class PairState:
    first: str
    second: str
    verdict: PairVerdict | None
    """None while the comparison is open."""
    rounds: int
    """Rounds read: up to the decision when decided."""
    trials: int
    usd: float
    """What the rounds read cost, both arms."""
    difference: float
    """first - second: the mean per-task pass-rate difference over the rounds read."""
    lower: float
    upper: float
    reason: str = ""
    """Why an ``inconclusive`` pair stopped."""
    fixed_rounds: int | None = None
    """Rounds a fixed design of the same power would run (an estimate from this pair's data)."""

    @property
    def pair(self) -> tuple[str, str]:
        return (self.first, self.second)

    @property
    def open(self) -> bool:
        return self.verdict is None


def pairs_of(arms: Sequence[str]) -> list[tuple[str, str]]:
    return list(combinations(arms, 2))


def follow(
    arms: Sequence[str],
    tasks: Sequence[str],
    outcome: OutcomeOf,
    settings: DecisionSettings,
    *,
    interval: bool = True,
    stopped: Callable[[tuple[str, str]], str | None] = lambda pair: None,
) -> list[PairState]:
    """Every pair's state from the outcomes recorded so far. ``stopped`` names why a pair that
    is still open can go no further (an arm cannot run, the spend cap): it is inconclusive."""
    pairs = pairs_of(arms)
    alpha = settings.alpha / max(len(pairs), 1)
    return [
        _follow_pair(pair, tasks, outcome, settings, alpha, interval, stopped(pair))
        for pair in pairs
    ]


def _follow_pair(
    pair: tuple[str, str],
    tasks: Sequence[str],
    outcome: OutcomeOf,
    settings: DecisionSettings,
    alpha: float,
    interval: bool,
    stop_reason: str | None,
) -> PairState:
    sequence = BettingSequence(alpha, tracked_points(settings.margin), grid=interval)
    usd = 0.0
    verdict: SequentialVerdict | None = None
    observed: list[float] = []
    for repetition in range(1, settings.max_repeats + 1):
        cells = [(outcome(pair[0], t, repetition), outcome(pair[1], t, repetition)) for t in tasks]
        if any(a is None or b is None for a, b in cells):
            break
        value = sum(int(a.passed) - int(b.passed) for a, b in cells if a and b) / len(tasks)
        usd += sum(a.usd + b.usd for a, b in cells if a and b)
        sequence.add(value)
        observed.append(value)
        verdict = decide(sequence, settings.margin)
        if verdict is not None:
            break
    rounds = sequence.count
    final: PairVerdict | None = verdict
    reason = ""
    if final is None and rounds == settings.max_repeats:
        final, reason = "inconclusive", f"still open after {rounds} rounds (the most allowed)"
    elif final is None and stop_reason:
        final, reason = "inconclusive", stop_reason
    bounds = sequence.interval
    fixed = None
    if verdict is not None:
        fixed = fixed_design_rounds(observed, alpha, settings, verdict, seed="/".join(pair))
    return PairState(
        first=pair[0],
        second=pair[1],
        verdict=final,
        rounds=rounds,
        trials=2 * len(tasks) * rounds,
        usd=usd,
        difference=sequence.mean,
        lower=bounds.lower,
        upper=bounds.upper,
        reason=reason,
        fixed_rounds=fixed,
    )


def sequential_power(
    rounds: Sequence[float], alpha: float, settings: DecisionSettings, verdict: str, seed: str
) -> float:
    """The chance the test reaches ``verdict`` within the most rounds allowed, were the rounds
    drawn from those observed (resampled with replacement, seeded: the same data give the same
    figure)."""
    rng = random.Random(seed)
    hits = 0
    for _ in range(POWER_RESAMPLES):
        sequence = BettingSequence(alpha, tracked_points(settings.margin), grid=False)
        for _ in range(settings.max_repeats):
            sequence.add(rng.choice(rounds))
            reached = decide(sequence, settings.margin)
            if reached is not None:
                hits += reached == verdict
                break
    return hits / POWER_RESAMPLES


def fixed_design_rounds(
    rounds: Sequence[float],
    alpha: float,
    settings: DecisionSettings,
    verdict: SequentialVerdict,
    seed: str,
) -> int | None:
    """Rounds a fixed design would need for the same power at this pair's observed difference
    and spread (a z test at the same alpha; two one-sided tests for ``equivalent``). The spread
    is regularised as the bets' own plug-in is, so that rounds that all agree do not claim a
    spread of zero. None when the observed difference gives a fixed design nothing to detect."""
    power = min(sequential_power(rounds, alpha, settings, verdict, seed), POWER_CAP)
    if power <= 0.5:
        return None
    normal = statistics.NormalDist()
    mean = statistics.fmean(rounds)
    halves = [(x + 1) / 2 for x in rounds]
    centre = statistics.fmean(halves)
    spread = 2 * math.sqrt((0.25 + sum((h - centre) ** 2 for h in halves)) / (len(rounds) + 1))
    if verdict == "equivalent":
        assert settings.margin is not None
        room = settings.margin - abs(mean)
        z = normal.inv_cdf(1 - alpha) + normal.inv_cdf((1 + power) / 2)
    else:
        room = abs(mean)
        z = normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)
    if room <= 0:
        return None
    return max(1, math.ceil((z * spread / room) ** 2))
