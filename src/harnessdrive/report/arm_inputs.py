"""The finished trials of a report, as the arms the comparison model decides between
(stats/decisions.py): per task, each repeat's outcome and cost, and which arms are baselines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harnessdrive.harnesses.scripted import SCRIPTED_AGENTS
from harnessdrive.stats.decisions import ArmInput
from harnessdrive.store.results import TrialResult

BASELINE_HARNESSES = frozenset(agent.name for agent in SCRIPTED_AGENTS)
"""The built-in scripted agents: they calibrate a suite, they are not a choice."""


def is_baseline(result: TrialResult) -> bool:
    return result.harness in BASELINE_HARNESSES or result.variant.baseline


def counts_as_pass(
    result: TrialResult, reviews: Mapping[str, str] | None, accepted_only: bool
) -> bool:
    """A pass; with ``accepted_only``, a pass a person accepted (``harnessdrive review``)."""
    if result.outcome != "pass":
        return False
    if not accepted_only:
        return True
    return reviews is not None and reviews.get(result.trial_id) == "accepted"


def arm_inputs(
    results: Sequence[TrialResult],
    variants: Sequence[str],
    *,
    reviews: Mapping[str, str] | None = None,
    accepted_only: bool = False,
) -> list[ArmInput]:
    """One arm per variant, in ``variants`` order, from the finished trials ``results``."""
    outcomes: dict[str, dict[str, list[float]]] = {v: {} for v in variants}
    costs: dict[str, dict[str, list[float]]] = {v: {} for v in variants}
    baseline = dict.fromkeys(variants, False)
    for result in results:
        name = result.variant_label
        if name not in outcomes:
            continue
        value = 1.0 if counts_as_pass(result, reviews, accepted_only) else 0.0
        outcomes[name].setdefault(result.task, []).append(value)
        costs[name].setdefault(result.task, []).append(result.cost.charged_usd)
        baseline[name] = baseline[name] or is_baseline(result)
    return [ArmInput(v, outcomes[v], costs[v], baseline[v]) for v in variants]
