"""A scripted agent that solves a task by chance, the same way every time for a given seed.

Load it by dotted path as a harness name, ``harnessdrive.testing.chance:ChanceAgent``; its
options set how often it solves::

    [[variants]]
    harness = "harnessdrive.testing.chance:ChanceAgent"
    name = "coin"
    options = { rate = 0.5, seed = 3, tasks = { hard = 0.0, easy = 1.0 } }

- ``rate`` (default 0.5): the chance that a trial applies the task's reference solution;
  otherwise it changes nothing;
- ``tasks``: a rate per task id, instead of ``rate``;
- ``seed`` (default 0): each (seed, task, repetition) decides its trial once and for all, so a
  rerun, a resume or a test gets the same verdicts.

A coin flip repeated five times disagrees with itself: what the report's flaky-task flags and
paired statistics are tested on.
"""

from __future__ import annotations

import random
from typing import Annotated

from pydantic import Field

from harnessdrive.harnesses.base import AgentRequest
from harnessdrive.harnesses.options import HarnessOptions, parse_options
from harnessdrive.harnesses.scripted import ReferenceAgent
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.workspace.solution import apply_solution


class ChanceOptions(HarnessOptions):
    rate: float = Field(default=0.5, ge=0, le=1)
    tasks: dict[str, Annotated[float, Field(ge=0, le=1)]] = Field(default_factory=dict)
    seed: int = 0


class ChanceAgent(ReferenceAgent):
    """Applies the reference solution with a chance set by its options, by seed."""

    name = "chance"
    claim = "Done."
    options_model = ChanceOptions

    def check_variant(self, variant: VariantSpec) -> None:
        parse_options(ChanceOptions, variant, self.name)

    def edit(self, request: AgentRequest) -> list[str]:
        options = parse_options(ChanceOptions, request.variant, self.name)
        rate = options.tasks.get(request.task.id, options.rate)
        if not solves(options.seed, request.task.id, request.repetition, rate):
            return []
        return apply_solution(request.task, request.workspace) if request.task.solution else []


def solves(seed: int, task: str, repetition: int, rate: float) -> bool:
    """Whether this trial solves: a draw fixed by (seed, task, repetition)."""
    return random.Random(f"{seed}/{task}/{repetition}").random() < rate
