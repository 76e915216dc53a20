"""How ``run --until-decided`` errs and what it saves, in simulated worlds. Prints; asserts nothing.

    python benchmarks/until_decided.py [--runs 2000] [--seed 1]

Every simulated run goes through the decision code a real run uses (``follow`` in
stats/sequential_design.py): the same first pass and random slots, the same confidence
sequences, the same Bonferroni split, the same rules, with the state read after every
observation (a slot's trial pair: the smallest step at which the state can change; a real run
reads it after every trial).

- False verdicts: arms that are truly identical (per-task pass rates spread from 25% to 65%),
  and arms equal only on average (20 points apart on every task, half one way, half the
  other), a budget of 50 passes. Any ``better`` or ``worse`` is false; the share of runs with
  one.
  Goal: at most 5% (the confidence sequences promise at most 1 - confidence, for every pair at
  once, however long the run).
- Cost to a decision: one arm 20 points better on every task, 10 tasks, several budgets. The
  sequential run's power (the share of runs that say ``better``) and its mean trials and
  dollars; against them the fixed design of the same power (taken as at most 99%, as the
  run's own estimate does): the fewest passes (every arm on every task once per pass) at which
  a two-sided paired t test over the tasks (each task's mean difference over its passes), at
  the same alpha, reaches that power in simulation; and, the most favourable fixed design, a z
  test that knows the variance. Goal: the sequential run's trials at most 60% of the fixed
  design's.

Dollars assume $0.45 a trial for the better arm and $0.30 for the other, for both designs.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Sequence

from scipy import stats as scipy_stats

from harnessdrive.stats.sequential_design import (
    POWER_CAP,
    DecisionSettings,
    Outcome,
    follow,
    pair_alpha,
    repeats_needed,
    slot_plan,
)

PRICES = {"A": 0.45, "B": 0.30, "C": 0.30}


def base_rates(tasks: int) -> list[float]:
    return [0.25 + 0.4 * k / max(tasks - 1, 1) for k in range(tasks)]


class World:
    """Arms with fixed per-task pass rates; each run draws its trials from its own seed."""

    def __init__(self, rates: dict[str, list[float]]) -> None:
        self.rates = rates
        self.arms = list(rates)
        self.tasks = [f"t{k}" for k in range(len(next(iter(rates.values()))))]

    def draw(self, rng: random.Random, repeats: int) -> dict[tuple[str, str, int], Outcome]:
        return {
            (arm, task, repetition): Outcome(rng.random() < self.rates[arm][k], PRICES[arm])
            for repetition in range(1, repeats + 1)
            for arm in self.arms
            for k, task in enumerate(self.tasks)
        }


Summary = dict[tuple[str, str], tuple[str | None, int]]
"""Per pair: its verdict, and the trials it took."""


def sequential(world: World, settings: DecisionSettings, runs: int, seed: int) -> list[Summary]:
    """One summary per simulated run."""
    found: list[Summary] = []
    slots = slot_plan(world.tasks, settings.max_repeats)
    repeats = repeats_needed(world.tasks, settings.max_repeats)
    for run in range(runs):
        draws = world.draw(random.Random(f"{seed}/{run}"), repeats)
        states = follow(
            world.arms,
            world.tasks,
            lambda arm, task, rep, d=draws: d.get((arm, task, rep)),  # type: ignore[misc]
            settings,
            slots=slots,
            interval=False,
        )
        found.append({s.pair: (s.verdict, s.trials) for s in states})
    return found


def t_test_power(world: World, passes: int, alpha: float, sims: int, seed: int) -> float:
    """The share of fixed designs of ``passes`` passes whose paired t test over the tasks
    rejects at ``alpha``, two-sided, in the direction of A."""
    rng = random.Random(f"fixed/{seed}/{passes}")
    a_rates, b_rates = world.rates["A"], world.rates["B"]
    hits = 0
    for _ in range(sims):
        differences = [
            (
                sum(rng.random() < a for _ in range(passes))
                - sum(rng.random() < b for _ in range(passes))
            )
            / passes
            for a, b in zip(a_rates, b_rates, strict=True)
        ]
        mean = statistics.fmean(differences)
        spread = statistics.stdev(differences)
        if spread == 0:
            hits += mean > 0
            continue
        t = mean / (spread / len(differences) ** 0.5)
        hits += t > 0 and 2 * scipy_stats.t.sf(t, len(differences) - 1) < alpha
    return hits / sims


def fixed_passes_for(world: World, power: float, alpha: float, sims: int, seed: int) -> int:
    low, high = 1, 1
    while t_test_power(world, high, alpha, sims, seed) < power:
        low, high = high, high * 2
        if high > 400:
            return high
    while low < high:  # the fewest passes that reach the power
        middle = (low + high) // 2
        if t_test_power(world, middle, alpha, sims, seed) >= power:
            high = middle
        else:
            low = middle + 1
    return high


def normal_passes(world: World, power: float, alpha: float) -> int:
    """Passes for the most favourable fixed design: a z test that knows each pair's variance
    at ``power``."""
    normal = statistics.NormalDist()
    pairs = list(zip(world.rates["A"], world.rates["B"], strict=True))
    difference = statistics.fmean(a - b for a, b in pairs)
    variance = statistics.fmean(a * (1 - a) + b * (1 - b) for a, b in pairs)
    z = normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)
    return max(1, math.ceil((z / difference) ** 2 * variance / len(pairs)))


def false_verdicts(runs: int, seed: int) -> None:
    print("False verdicts between identical arms (a look after every observation, 50 passes):")
    cases: Sequence[tuple[int, int, float | None]] = [
        (6, 2, None),
        (10, 2, None),
        (20, 2, None),
        (10, 2, 0.1),
        (10, 3, None),
    ]
    for tasks, arms, margin in cases:
        rates = {name: base_rates(tasks) for name in "ABC"[:arms]}
        settings = DecisionSettings(margin=margin, max_repeats=50)
        results = sequential(World(rates), settings, runs, seed)
        wrong = sum(
            any(verdict in ("better", "worse") for verdict, _ in run.values()) for run in results
        )
        equivalent = sum(
            all(verdict == "equivalent" for verdict, _ in run.values()) for run in results
        )
        extra = f", all pairs 'equivalent' in {equivalent / runs:.1%}" if margin else ""
        print(
            f"  {tasks:>2} tasks, {arms} arms, margin {margin or '-'}: "
            f"{wrong / runs:.1%} of {runs} runs with a false verdict (goal <= 5%){extra}"
        )


def zero_on_average(runs: int, seed: int) -> None:
    """Arms equal on average but not task by task: A 20 points better on half the tasks and 20
    worse on the other half. The mean difference is 0, so ``better`` or ``worse`` is false."""
    tasks = 10
    base = [0.3 + 0.4 * k / (tasks - 1) for k in range(tasks)]
    shifted = [p + 0.2 if k % 2 else p - 0.2 for k, p in enumerate(base)]
    settings = DecisionSettings(max_repeats=50)
    results = sequential(World({"A": shifted, "B": base}), settings, runs, seed)
    wrong = sum(run[("A", "B")][0] in ("better", "worse") for run in results)
    print(
        f"  {tasks} tasks, 2 arms equal on average, +-20 points task by task: "
        f"{wrong / runs:.1%} of {runs} runs with a false verdict (goal <= 5%)"
    )


def cost_to_decide(runs: int, seed: int) -> None:
    tasks = 10
    base = base_rates(tasks)
    world = World({"A": [p + 0.2 for p in base], "B": base})
    per_pass = tasks * (PRICES["A"] + PRICES["B"])
    print(f"Cost to a decision at a 20-point difference ({tasks} tasks, 2 arms):")
    for most in (10, 20, 30, 40, 50):
        settings = DecisionSettings(max_repeats=most)
        alpha = pair_alpha(settings, 2)
        results = [run[("A", "B")] for run in sequential(world, settings, runs, seed)]
        power = sum(verdict == "better" for verdict, _ in results) / runs
        trials = statistics.fmean(t for _, t in results)
        dollars = trials / 2 * (PRICES["A"] + PRICES["B"])
        # Power is taken as at most 99% for the fixed designs, as the run's own estimate takes
        # it: a fixed design sized for near-certainty has no stable size.
        target = min(power, POWER_CAP)
        fixed = fixed_passes_for(world, target, alpha, max(2 * runs, 2000), seed)
        ideal = normal_passes(world, target, alpha)
        print(
            f"  budget {most} passes: power {power:.1%}; sequential {trials:.0f} trials on "
            f"average (${dollars:.2f}); fixed design of power {target:.1%}: {fixed} passes, "
            f"{2 * tasks * fixed} trials (${fixed * per_pass:.2f}); "
            f"ratio {trials / (2 * tasks * fixed):.0%} (goal <= 60%); against a z test that "
            f"knows the variance, {ideal} passes: {trials / (2 * tasks * ideal):.0%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated runs per line")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.monotonic()
    false_verdicts(args.runs, args.seed)
    zero_on_average(args.runs, args.seed)
    cost_to_decide(args.runs, args.seed)
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
