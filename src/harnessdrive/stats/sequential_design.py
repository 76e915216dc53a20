"""Run-until-decided comparisons: paired trials on tasks drawn at random, read by confidence
sequences.

What a pair of arms is compared on is the difference of their mean per-task pass rates, the
quantity every view of the report compares. Each comparison reads a sequence of observations
in [-1, 1] whose expectation, given everything before, is exactly that difference:

1. the first pass: every arm on every task once (repetition 1); its observation is the mean
   over tasks of (pass of the first arm - pass of the second);
2. then slots: slot i is a task drawn uniformly at random (with replacement) by a generator
   seeded from the suite's task ids alone, never from an outcome, at that task's next
   repetition; its observation is the pair's pass difference on that one trial each.

A task drawn at random makes each slot's expectation the mean over tasks, whatever was seen
before, and one trial pair per observation lets the bets grow as fast as the data allow (a
round's mean would be bounded by [-1, 1] too, but spread far less than that range, and a bet
must survive its whole range). Each pair reads its sequence in order through a
:class:`BettingSequence` at level alpha divided by the number of pairs (Bonferroni: every
sequence covers at every time at once with probability 1 - alpha, so each pair may stop on its
own), and is decided at the first observation its sequence decides; the decision is final.

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
"""Replays of the test on resampled data that estimate its power, for the fixed-design cost."""

POWER_CAP = 0.99
"""Power above this is taken as this much: a fixed design for certainty has no finite size."""


@dataclass(frozen=True)
class DecisionSettings:
    confidence: float = 0.95
    margin: float | None = None
    """Arms within +-margin of each other are ``equivalent``; None: never equivalent."""
    max_repeats: int = 10
    """The budget of each comparison: as many trial pairs as this many passes over the tasks
    (a task drawn often may run more often than this). Still open after it: ``inconclusive``."""

    @property
    def alpha(self) -> float:
        return 1 - self.confidence


@dataclass(frozen=True)
class Outcome:
    passed: bool
    usd: float = 0.0


OutcomeOf = Callable[[str, str, int], Outcome | None]
"""(arm, task, repetition) -> the standing outcome of that trial, or None when there is none."""

Slot = tuple[str, int]
"""A task drawn, and the repetition of it the slot runs."""

Cell = tuple[str, str, int]
"""(arm, task, repetition): one trial."""

StopReason = Callable[[tuple[str, str], list[Cell]], str | None]
"""(pair, the trials it waits for) -> why they will not come in this run, or None."""


@dataclass(frozen=True)
class PairState:
    first: str
    second: str
    verdict: PairVerdict | None
    """None while the comparison is open."""
    slots_read: int
    """Slots read after the first pass (0 until the first pass is complete)."""
    trials: int
    """Trials read, both arms: up to the decision when decided."""
    usd: float
    """What the trials read cost."""
    difference: float
    """first - second: the mean per-task pass-rate difference, estimated from the trials read."""
    lower: float
    upper: float
    reason: str = ""
    """Why an ``inconclusive`` pair stopped."""
    differences: tuple[int, ...] = ()
    """Each trial pair's pass difference, in the order read (the first pass task by task)."""

    @property
    def pair(self) -> tuple[str, str]:
        return (self.first, self.second)

    @property
    def open(self) -> bool:
        return self.verdict is None

    @property
    def first_pass_done(self) -> bool:
        return bool(self.differences)


def pairs_of(arms: Sequence[str]) -> list[tuple[str, str]]:
    return list(combinations(arms, 2))


def pair_alpha(settings: DecisionSettings, arms: int) -> float:
    """Each pair's level: the run's alpha split evenly over its pairs (Bonferroni)."""
    return settings.alpha / max(arms * (arms - 1) // 2, 1)


def slot_plan(tasks: Sequence[str], max_repeats: int) -> list[Slot]:
    """The slots after the first pass, drawn once and for all from the task ids (a string seed
    is hashed the same way on every platform and Python version). A larger budget extends the
    same sequence: a run given more goes on where a smaller one stopped, never starts another."""
    rng = random.Random("until-decided/" + "\n".join(tasks))
    runs = dict.fromkeys(tasks, 1)
    slots = []
    for _ in range((max_repeats - 1) * len(tasks)):
        task = tasks[rng.randrange(len(tasks))]
        runs[task] += 1
        slots.append((task, runs[task]))
    return slots


def repeats_needed(tasks: Sequence[str], max_repeats: int) -> int:
    """The highest repetition any slot runs: how many repeats the plan must list."""
    return max((repetition for _, repetition in slot_plan(tasks, max_repeats)), default=1)


def follow(
    arms: Sequence[str],
    tasks: Sequence[str],
    outcome: OutcomeOf,
    settings: DecisionSettings,
    *,
    slots: Sequence[Slot] | None = None,
    interval: bool = True,
    stopped: StopReason = lambda pair, waiting: None,
) -> list[PairState]:
    """Every pair's state from the outcomes recorded so far. ``stopped`` names why a pair that
    is still open can go no further (an arm cannot run, the spend cap, a trial that could not
    finish): it is then inconclusive."""
    if slots is None:
        slots = slot_plan(tasks, settings.max_repeats)
    alpha = pair_alpha(settings, len(arms))
    return [
        _follow_pair(pair, tasks, slots, outcome, settings, alpha, interval, stopped)
        for pair in pairs_of(arms)
    ]


def _follow_pair(
    pair: tuple[str, str],
    tasks: Sequence[str],
    slots: Sequence[Slot],
    outcome: OutcomeOf,
    settings: DecisionSettings,
    alpha: float,
    interval: bool,
    stopped: StopReason,
) -> PairState:
    sequence = BettingSequence(alpha, tracked_points(settings.margin), grid=interval)
    differences: list[int] = []
    usd = 0.0
    verdict: SequentialVerdict | None = None
    read = 0
    first = [(outcome(pair[0], t, 1), outcome(pair[1], t, 1)) for t in tasks]
    waiting = [
        (arm, task, 1)
        for task, cell in zip(tasks, first, strict=True)
        for arm, found in zip(pair, cell, strict=True)
        if found is None
    ]
    if not waiting:
        for a, b in first:
            assert a is not None and b is not None
            differences.append(int(a.passed) - int(b.passed))
            usd += a.usd + b.usd
        sequence.add(sum(differences) / len(tasks))
        verdict = decide(sequence, settings.margin)
        for task, repetition in slots:
            if verdict is not None:
                break
            a, b = outcome(pair[0], task, repetition), outcome(pair[1], task, repetition)
            if a is None or b is None:
                found = zip(pair, (a, b), strict=True)
                waiting = [(arm, task, repetition) for arm, x in found if x is None]
                break
            difference = int(a.passed) - int(b.passed)
            differences.append(difference)
            usd += a.usd + b.usd
            sequence.add(difference)
            read += 1
            verdict = decide(sequence, settings.margin)
    final: PairVerdict | None = verdict
    reason = ""
    if final is None and differences and read == len(slots):
        final = "inconclusive"
        reason = f"still open after {2 * len(differences)} trials (the budget)"
    elif final is None and (stop_reason := stopped(pair, waiting)):
        final, reason = "inconclusive", stop_reason
    bounds = sequence.interval
    return PairState(
        first=pair[0],
        second=pair[1],
        verdict=final,
        slots_read=read,
        trials=2 * len(differences),
        usd=usd,
        difference=statistics.fmean(differences) if differences else 0.0,
        lower=bounds.lower,
        upper=bounds.upper,
        reason=reason,
        differences=tuple(differences),
    )


def sequential_power(
    differences: Sequence[int],
    tasks: int,
    alpha: float,
    settings: DecisionSettings,
    verdict: str,
    seed: str,
) -> float:
    """The chance the test reaches ``verdict`` within its budget, were the trial pairs drawn
    from those observed (resampled with replacement, seeded: the same data give the same
    figure)."""
    rng = random.Random(seed)
    hits = 0
    for _ in range(POWER_RESAMPLES):
        sequence = BettingSequence(alpha, tracked_points(settings.margin), grid=False)
        sequence.add(statistics.fmean(rng.choice(differences) for _ in range(tasks)))
        reached = decide(sequence, settings.margin)
        for _ in range((settings.max_repeats - 1) * tasks):
            if reached is not None:
                break
            sequence.add(rng.choice(differences))
            reached = decide(sequence, settings.margin)
        hits += reached == verdict
    return hits / POWER_RESAMPLES


def fixed_design_passes(
    differences: Sequence[int],
    tasks: int,
    alpha: float,
    settings: DecisionSettings,
    verdict: SequentialVerdict,
    seed: str,
) -> int | None:
    """Passes over the tasks a fixed design would need for the same power at this pair's
    observed difference and spread (a z test at the same alpha; two one-sided tests for
    ``equivalent``). The spread is regularised as the bets' own plug-in is, so that trials that
    all agree do not claim a spread of zero. None when the observed difference gives a fixed
    design nothing to detect."""
    power = min(sequential_power(differences, tasks, alpha, settings, verdict, seed), POWER_CAP)
    if power <= 0.5:
        return None
    normal = statistics.NormalDist()
    mean = statistics.fmean(differences)
    halves = [(x + 1) / 2 for x in differences]
    centre = statistics.fmean(halves)
    spread = 2 * math.sqrt((0.25 + sum((h - centre) ** 2 for h in halves)) / (len(halves) + 1))
    if verdict == "equivalent":
        assert settings.margin is not None
        room = settings.margin - abs(mean)
        z = normal.inv_cdf(1 - alpha) + normal.inv_cdf((1 + power) / 2)
    else:
        room = abs(mean)
        z = normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)
    if room <= 0:
        return None
    # However little the spread, an exact test needs this many trial pairs that all agree.
    fewest = math.ceil(math.log2(2 / alpha))
    return max(math.ceil(fewest / tasks), math.ceil((z * spread / room) ** 2 / tasks))
