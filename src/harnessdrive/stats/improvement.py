"""Improvement tasks and differential graders, summed over trials: improvement ratios on a log
scale, and per-rule pass rates.

A ratio is how many times better the final state is than the baseline (above 1 is better, in
the objective's own direction). Ratios multiply, so they are averaged as logarithms: the mean of
1/2 and 2 is 1, no change, not 1.25."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harnessdrive.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, cluster_bootstrap
from harnessdrive.stats.intervals import Interval, wilson


@dataclass(frozen=True)
class RatioSummary:
    ratio: float
    """The geometric mean ratio over tasks (each task's repeats averaged as logarithms)."""
    interval: Interval | None
    """A cluster bootstrap over tasks on the log scale, turned back into ratios."""
    tasks: int


def geometric_ratio(
    log_ratios: Mapping[str, Sequence[float]],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> RatioSummary | None:
    """The mean improvement over tasks from each task's natural-log ratios; None without any."""
    per_task = [statistics.fmean(values) for values in log_ratios.values() if values]
    if not per_task:
        return None
    interval = cluster_bootstrap(per_task, confidence=confidence, resamples=resamples, seed=seed)
    return RatioSummary(
        ratio=math.exp(statistics.fmean(per_task)),
        interval=Interval(math.exp(interval.low), math.exp(interval.high)) if interval else None,
        tasks=len(per_task),
    )


@dataclass(frozen=True)
class RuleRate:
    rule: str
    passed: float
    cases: float
    interval: Interval

    @property
    def rate(self) -> float:
        return self.passed / self.cases if self.cases else 0.0


RULE_PREFIX = "rule."


def rule_rates(metrics: Sequence[Mapping[str, float]]) -> list[RuleRate]:
    """Per-rule pass rates summed over trials from their ``rule.<name>.passed`` and
    ``rule.<name>.cases`` metrics (a differential grader's), by rule name."""
    passed: dict[str, float] = {}
    cases: dict[str, float] = {}
    for trial in metrics:
        for key, value in trial.items():
            if not key.startswith(RULE_PREFIX):
                continue
            rule, _, field = key[len(RULE_PREFIX) :].rpartition(".")
            if field == "passed":
                passed[rule] = passed.get(rule, 0.0) + value
            elif field == "cases":
                cases[rule] = cases.get(rule, 0.0) + value
    return [
        RuleRate(
            rule,
            passed.get(rule, 0.0),
            total,
            wilson(min(passed.get(rule, 0.0), total), int(total)),
        )
        for rule, total in sorted(cases.items())
        if total > 0
    ]
