"""Statistics over trial outcomes, as pure functions of plain numbers (no numpy, no scipy).

An *arm* is what a report compares: a mapping of task id to the outcomes of its repeats, each a
number in [0, 1] (1.0 a pass, 0.0 a fail, or a grader's score). Every function here is
deterministic; the bootstrap takes its seed as an argument.

``decide(arms)`` (stats/decisions.py) is the comparison model every report view uses: ranks,
two-level intervals, paired tests with Holm, verdicts with their reasons; ``answer`` puts it in
words.
"""

from harnessdrive.stats.answer import answer
from harnessdrive.stats.binomial import mcnemar, sign_test
from harnessdrive.stats.bootstrap import cluster_bootstrap
from harnessdrive.stats.decisions import (
    VERDICTS,
    ArmInput,
    ArmSummary,
    Decisions,
    PairDecision,
    decide,
)
from harnessdrive.stats.intervals import Interval, wilson
from harnessdrive.stats.multiple import benjamini_hochberg, holm
from harnessdrive.stats.paired import PairedTask
from harnessdrive.stats.pareto import ParetoPoint, pareto_frontier
from harnessdrive.stats.passk import pass_at_k, pass_hat_k
from harnessdrive.stats.power import repeats_needed

__all__ = [
    "VERDICTS",
    "ArmInput",
    "ArmSummary",
    "Decisions",
    "Interval",
    "PairDecision",
    "PairedTask",
    "ParetoPoint",
    "answer",
    "benjamini_hochberg",
    "cluster_bootstrap",
    "decide",
    "holm",
    "mcnemar",
    "pareto_frontier",
    "pass_at_k",
    "pass_hat_k",
    "repeats_needed",
    "sign_test",
    "wilson",
]
