"""How the fixed-design comparison behaves in worlds whose answer is known, side by side with a
plain paired t test on the same data. Asserts nothing.

    python benchmarks/verdict_statistics.py [--simulations 2000] [--seed 0]

Each world draws every task's true pass rate from a Beta distribution, then each arm's trials
of that task from its own rate: one trial per task, four, or unequal repeats (each arm 1 to 5
trials per task, drawn apart). Per world it prints, for harnessdrive's rule (exact McNemar and
Tango's interval with one trial per task, else the sign-flip permutation test and a t interval
over per-task means; a verdict needs p < 0.05 and the 95% interval on one side of 0: one
comparison, so Holm changes nothing) and for the t test (per-task mean differences, p < 0.05):

- identical arms: the rate of false better/worse verdicts (goal: at most 5%);
- a true difference: the coverage of the 95% interval of the difference (goal: at least 94%
  from 10 tasks, at least 90% at 6), and of an arm's pass-rate interval;
- a 15- and a 30-point difference: power, the share of runs that say "better".
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from harnessdrive.stats.pair_test import pair_interval, pair_test
from harnessdrive.stats.paired import PairedTask
from harnessdrive.stats.rates import arm_rate
from harnessdrive.stats.student import t_quantile, t_two_sided_p

TASK_COUNTS = (6, 10, 20, 50)
ALPHA = 0.05
Repeats = Callable[[random.Random], int]
DESIGNS: dict[str, tuple[Repeats, Repeats]] = {
    "1 repeat": (lambda rng: 1, lambda rng: 1),
    "4 repeats": (lambda rng: 4, lambda rng: 4),
    "unequal 1-5": (lambda rng: rng.randint(1, 5), lambda rng: rng.randint(1, 5)),
}


@dataclass(frozen=True)
class World:
    """Task rates: second ~ (1 - shift) * Beta(a, b), first = second + shift, or identical."""

    a: float
    b: float
    shift: float

    def rates(self, rng: random.Random) -> tuple[float, float]:
        base = rng.betavariate(self.a, self.b) * (1 - self.shift)
        return base + self.shift, base

    @property
    def second_mean(self) -> float:
        return (1 - self.shift) * self.a / (self.a + self.b)


def run_once(
    world: World, tasks: int, design: tuple[Repeats, Repeats], rng: random.Random
) -> list[PairedTask]:
    found = []
    for i in range(tasks):
        first_rate, second_rate = world.rates(rng)
        first = [float(rng.random() < first_rate) for _ in range(design[0](rng))]
        second = [float(rng.random() < second_rate) for _ in range(design[1](rng))]
        found.append(
            PairedTask(
                f"t{i}", statistics.fmean(first), statistics.fmean(second), len(first), len(second)
            )
        )
    return found


@dataclass
class Tally:
    runs: int = 0
    ours_decided: int = 0
    t_decided: int = 0
    ours_better: int = 0
    t_better: int = 0
    ours_covered: int = 0
    t_covered: int = 0
    rate_covered: int = 0

    def share(self, count: int) -> str:
        return f"{100 * count / self.runs:5.1f}%"


def ours(tasks: list[PairedTask]) -> tuple[str, tuple[float, float] | None]:
    interval, _ = pair_interval(tasks, 1 - ALPHA)
    if interval is None:
        return "inconclusive", None
    p = pair_test(tasks, draws=2000).p_value
    bounds = (interval.low, interval.high)
    if p < ALPHA and interval.low > 0:
        return "better", bounds
    if p < ALPHA and interval.high < 0:
        return "worse", bounds
    return "inconclusive", bounds


def t_test(tasks: list[PairedTask]) -> tuple[str, tuple[float, float] | None]:
    differences = [t.difference for t in tasks]
    mean = statistics.fmean(differences)
    spread = statistics.stdev(differences)
    if spread == 0:
        # A t test has nothing to divide by: every task differs by the same amount.
        verdict = "inconclusive" if mean == 0 else ("better" if mean > 0 else "worse")
        return verdict, (mean, mean)
    error = spread / math.sqrt(len(differences))
    p = t_two_sided_p(mean / error, len(differences) - 1)
    half = t_quantile(1 - ALPHA / 2, len(differences) - 1) * error
    verdict = "inconclusive" if p >= ALPHA else ("better" if mean > 0 else "worse")
    return verdict, (mean - half, mean + half)


def simulate(world: World, tasks: int, design: str, simulations: int, seed: int) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    for _ in range(simulations):
        paired = run_once(world, tasks, DESIGNS[design], rng)
        tally.runs += 1
        for tester, decided in ((ours, "ours"), (t_test, "t")):
            verdict, bounds = tester(paired)
            if verdict != "inconclusive":
                setattr(tally, f"{decided}_decided", getattr(tally, f"{decided}_decided") + 1)
            if verdict == "better":
                setattr(tally, f"{decided}_better", getattr(tally, f"{decided}_better") + 1)
            if bounds is not None and bounds[0] <= world.shift <= bounds[1]:
                setattr(tally, f"{decided}_covered", getattr(tally, f"{decided}_covered") + 1)
        # The arm-rate interval from the second arm's trials, against its true mean rate.
        trials = _second_trials(paired)
        rate = arm_rate(trials)
        if rate is not None and rate.interval.low <= world.second_mean <= rate.interval.high:
            tally.rate_covered += 1
    return tally


def _second_trials(paired: list[PairedTask]) -> dict[str, list[float]]:
    found = {}
    for t in paired:
        passes = round(t.second * t.second_trials)
        found[t.task] = [1.0] * passes + [0.0] * (t.second_trials - passes)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.monotonic()
    n = args.simulations
    print(f"{n} simulated runs per line; tasks' rates ~ Beta(2, 2) unless said.\n")
    print("False better/worse verdicts between identical arms (goal: at most 5%)")
    print(f"{'design':<13} {'tasks':>5}  {'harnessdrive':>12}  {'t test':>7}")
    for design in DESIGNS:
        for tasks in TASK_COUNTS:
            found = simulate(World(2, 2, 0.0), tasks, design, n, args.seed)
            print(
                f"{design:<13} {tasks:>5}  {found.share(found.ours_decided):>12}  "
                f"{found.share(found.t_decided):>7}"
            )
    print("\nCoverage of the 95% interval of a 10-point difference, and of the second arm's")
    print("pass-rate interval (goal: at least 94% from 10 tasks, at least 90% at 6)")
    print(f"{'design':<13} {'tasks':>5}  {'difference':>10}  {'t test':>7}  {'pass rate':>9}")
    for world_name, world in (("Beta(2, 2)", World(2, 2, 0.1)), ("Beta(4, 1)", World(4, 1, 0.1))):
        print(f"  tasks' rates ~ {world_name}")
        for design in DESIGNS:
            for tasks in TASK_COUNTS:
                found = simulate(world, tasks, design, n, args.seed + 1)
                print(
                    f"{design:<13} {tasks:>5}  {found.share(found.ours_covered):>10}  "
                    f"{found.share(found.t_covered):>7}  {found.share(found.rate_covered):>9}"
                )
    print("\nPower: the share of runs that say 'better' at a true 15- and 30-point difference")
    print(f"{'design':<13} {'tasks':>5}  {'points':>6}  {'harnessdrive':>12}  {'t test':>7}")
    for shift in (0.15, 0.30):
        for design in DESIGNS:
            for tasks in TASK_COUNTS:
                found = simulate(World(2, 2, shift), tasks, design, n, args.seed + 2)
                print(
                    f"{design:<13} {tasks:>5}  {shift * 100:>6.0f}  "
                    f"{found.share(found.ours_better):>12}  {found.share(found.t_better):>7}"
                )
    print(f"\n{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
