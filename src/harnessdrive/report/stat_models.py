"""The report's statistics as data: each arm's rate, interval and cost, every comparison with
its verdict and why, flaky tasks and the frontier (docs/report.md, ``report.json``). Built by
report/statistics.py."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from harnessdrive.report.trust_counting import TrustCounting
from harnessdrive.stats import Interval
from harnessdrive.stats.decisions import MIN_TASKS

CONFIDENCE = 0.95
DEFAULT_SEED = 0


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Bounds(_Model):
    low: float
    high: float

    @classmethod
    def of(cls, interval: Interval | None) -> Bounds | None:
        if interval is None:
            return None
        return cls(low=round(interval.low, 6), high=round(interval.high, 6))


class RatioStats(_Model):
    ratio: float
    interval: Bounds | None
    tasks: int


class RuleStats(_Model):
    rule: str
    passed: float
    cases: float
    rate: float
    interval: Bounds


class ArmStats(_Model):
    variant: str
    tasks: int
    trials: int
    pass_rate: float | None
    """The mean over tasks of each task's pass rate (repeats averaged first)."""
    interval: Bounds | None
    """The two-level interval of that rate: Wilson's at the effective number of trials."""
    rank: int = 0
    """1 for the highest rate; equal rates share a rank."""
    tied: bool = False
    baseline: bool = False
    """A calibration arm (a built-in scripted agent, or a variant with ``baseline = true``)."""
    effective_trials: float | None = None
    """What the interval counts: the tasks with one trial each, up to every trial when repeats
    agree with each other."""
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    """k to the unbiased pass@k, for k up to the fewest repeats of a task (when 2 or more)."""
    pass_hat_k: dict[str, float] = Field(default_factory=dict)
    cost_per_trial: float | None = None
    """The mean over tasks of each task's mean cost per trial (the cost of a task)."""
    cost_interval: Bounds | None = None
    """Student's t interval of that cost over tasks; None below 2 tasks or without spread."""
    cost_high: float | None = None
    """The upper end of ``cost_interval`` (the cost itself when there is none)."""
    cost_per_pass: float | None = None
    cost_per_pass_interval: Bounds | None = None
    """A percentile bootstrap over tasks; None when a resample could pass nothing."""
    on_frontier: bool = False
    accepted_rate: float | None = None
    """The pass rate counting only passes a person accepted (mean over tasks); None when no
    pass on the compared tasks was reviewed."""
    improvement: RatioStats | None = None
    rules: tuple[RuleStats, ...] = ()


class PairedTaskRow(_Model):
    task: str
    first: float
    second: float
    first_trials: int
    second_trials: int
    difference: float


class ProvenanceRow(_Model):
    field: str
    first: tuple[str, ...]
    second: tuple[str, ...]
    why: str
    summary: str | None = None
    """For the configuration hash: how many and which settings differ."""


class MeasureDifference(_Model):
    measure: str
    """``improvement`` (the natural-log improvement ratio) or ``rule <name>`` (a rule's pass
    rate)."""
    difference: float
    interval: Bounds | None
    p_value: float
    tasks: int


class Comparison(_Model):
    first: str
    second: str
    tasks: tuple[PairedTaskRow, ...]
    first_mean: float | None
    second_mean: float | None
    difference: float | None
    """Mean over paired tasks of first - second."""
    interval: Bounds | None
    confidence: float
    """The interval's level: 1 minus this comparison's Holm step level."""
    interval_method: str
    test: str
    p_value: float
    p_error: float = 0.0
    """The Monte Carlo standard error of ``p_value``; 0 when exact."""
    p_adjusted: float
    """Holm-adjusted over the comparisons of the view."""
    threshold: float
    """The level this comparison's Holm step needs ``p_value`` below."""
    verdict: str
    """``better`` / ``worse`` (first against second), ``equivalent``, or ``inconclusive``."""
    reason: str | None = None
    """Which condition failed, for an inconclusive verdict."""
    settle: str | None = None
    """What would likely settle an inconclusive comparison, simulated from this run."""
    more_tasks: int | None = None
    more_repeats: int | None = None
    p_better: float
    """P(first's mean per-task rate is above second's), a Bayesian bootstrap over tasks."""
    wins: int
    losses: int
    ties: int
    differing: int
    unequal_repeats: bool
    family: int
    """How many comparisons the Holm correction ran over."""
    cost_difference: float | None = None
    """Mean over paired tasks of first's cost per trial minus second's."""
    cost_interval: Bounds | None = None
    seed: int = DEFAULT_SEED
    measures: tuple[MeasureDifference, ...] = ()
    """Paired differences of the log improvement ratio and of each rule's pass rate, with
    intervals over tasks at the comparison's level; they describe, the verdict stays the pass
    rate's."""
    provenance: tuple[ProvenanceRow, ...] = ()
    """Where the two arms' trials differ beyond what their variants say (``compare`` only)."""
    trust: TrustCounting | None = None
    """The tasks the audit left out of the comparison (``compare`` only; None for a pytest
    session, which records no audits)."""

    def flipped(self) -> Comparison:
        """The same comparison read from the second arm's side."""
        swap = {"better": "worse", "worse": "better"}
        return self.model_copy(
            update={
                "first": self.second,
                "second": self.first,
                "tasks": tuple(
                    PairedTaskRow(
                        task=t.task,
                        first=t.second,
                        second=t.first,
                        first_trials=t.second_trials,
                        second_trials=t.first_trials,
                        difference=-t.difference,
                    )
                    for t in self.tasks
                ),
                "first_mean": self.second_mean,
                "second_mean": self.first_mean,
                "difference": None if self.difference is None else -self.difference,
                "interval": None
                if self.interval is None
                else Bounds(low=-self.interval.high, high=-self.interval.low),
                "verdict": swap.get(self.verdict, self.verdict),
                "p_better": round(1 - self.p_better, 6),
                "wins": self.losses,
                "losses": self.wins,
                "cost_difference": None if self.cost_difference is None else -self.cost_difference,
                "cost_interval": None
                if self.cost_interval is None
                else Bounds(low=-self.cost_interval.high, high=-self.cost_interval.low),
                "measures": tuple(
                    m.model_copy(
                        update={
                            "difference": -m.difference,
                            "interval": None
                            if m.interval is None
                            else Bounds(low=-m.interval.high, high=-m.interval.low),
                        }
                    )
                    for m in self.measures
                ),
            }
        )


class FlakyRow(_Model):
    task: str
    variant: str
    passes: float
    trials: int
    reason: str
    """``grading is nondeterministic`` (the same change graded twice apart, or a reference that
    does not always pass) or ``agent's spread across repeats``."""


class Statistics(_Model):
    confidence: float = CONFIDENCE
    margin: float | None = None
    """The equivalence margin, when one was given."""
    min_tasks: int = MIN_TASKS
    seed: int = DEFAULT_SEED
    accepted_only: bool = False
    """Only passes a person accepted count as passes."""
    answer: str = ""
    """The answer in words (the first line of every view)."""
    best: str | None = None
    tied: tuple[str, ...] = ()
    compared: tuple[str, ...] = ()
    """The arms the comparisons are among: the non-baseline ones (all when every arm is one)."""
    family: int = 0
    fewest_tasks: int = 0
    """The fewest tasks that differ with which any verdict of this family is possible."""
    arms: tuple[ArmStats, ...] = ()
    comparisons: tuple[Comparison, ...] = ()
    """Every pair of compared arms, the higher-ranked first."""
    flaky: tuple[FlakyRow, ...] = ()
    frontier: tuple[str, ...] = ()
    """Arms on the Pareto frontier of pass rate against cost per task, at their estimates,
    cheapest first."""

    def row_fields(self, variant: str) -> dict[str, object]:
        """What the scoreboard row of ``variant`` shows of these statistics."""
        arm = next((a for a in self.arms if a.variant == variant), None)
        return {
            "cost_per_pass": arm.cost_per_pass if arm else None,
            "interval": arm.interval if arm else None,
            "pass_rate": arm.pass_rate if arm else None,
            "rank": arm.rank if arm else 0,
            "versus_best": self.standing(variant),
        }

    def standing(self, variant: str) -> str | None:
        """``best``, ``tied``, ``baseline``, or this arm's verdict against the best."""
        arm = next((a for a in self.arms if a.variant == variant), None)
        if arm is None:
            return None
        if variant == self.best:
            return "best"
        if variant in self.tied:
            return "tied"
        if variant not in self.compared:
            return "baseline"
        anchor = self.best or (self.tied[0] if self.tied else None)
        found = self.between(variant, anchor) if anchor else None
        return found.verdict if found else None

    def between(self, first: str, second: str) -> Comparison | None:
        """``first`` against ``second``, read from ``first``'s side."""
        for c in self.comparisons:
            if (c.first, c.second) == (first, second):
                return c
            if (c.first, c.second) == (second, first):
                return c.flipped()
        return None
