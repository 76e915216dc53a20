"""What runs next: the plan's trials in order, minus those already recorded, under the cap.

The schedule knows nothing of where trials run or how they are recorded. It resumes (a trial
whose recorded result stands is not run again), skips the rest of a harness that cannot run
here, and holds the spend gate: a trial that spends money starts only while the cap, less the
high estimate reserved by every trial in flight, allows it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from harnessdrive.accounting.spend_gate import SpendGate
from harnessdrive.running.concurrency import ConcurrencyLimits, Slots
from harnessdrive.running.plan import Plan, PlannedTrial
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store


def is_done(result: TrialResult | None, trial: PlannedTrial, *, retry_failed: bool = False) -> bool:
    """Whether a recorded result stands, so a rerun does not repeat the trial.
    ``retry_failed``: a trial that could not run (a failure of the machinery) does not."""
    if result is None or result.task_fingerprint != trial.task.fingerprint:
        return False
    if result.status in ("interrupted", "skipped"):
        return False
    if retry_failed and result.status == "could_not_run":
        return False
    # A harness that never got to work and cost nothing is tried again (seed 000).
    return not (result.status == "could_not_run" and result.cost.charged_usd == 0)


@dataclass(frozen=True)
class Next:
    """The trial to take now: to start with ``budget_usd`` left, or to record as skipped."""

    trial: PlannedTrial
    budget_usd: float | None = None
    skip: str | None = None
    """Why it is recorded as skipped instead of run."""


class Schedule:
    def __init__(
        self,
        plan: Plan,
        store: Store,
        gate: SpendGate,
        slots: Slots | None = None,
        *,
        retry_failed: bool = False,
    ) -> None:
        self.gate = gate
        self.slots = slots or Slots(ConcurrencyLimits())
        self.total = len(plan.trials)
        self.already_done = 0
        self._queue: deque[PlannedTrial] = deque()
        for trial in plan.trials:
            result = store.recorded(trial.trial_id)
            if result is not None and is_done(result, trial, retry_failed=retry_failed):
                self.already_done += 1
                self._stands(trial.trial_id, result)
            else:
                self._queue.append(trial)
        self.skipped_harnesses: dict[str, str] = {}
        """Variant labels that cannot run here, each with the fix; their trials are skipped."""

    def _stands(self, trial_id: str, result: TrialResult) -> None:
        """A result recorded before the run began stands; a schedule that reads results keeps
        it here rather than reading its file again."""

    @property
    def pending(self) -> bool:
        return bool(self._queue)

    def next(self, *, in_flight: int) -> Next | None:
        """The next trial, or None while the trials in flight hold the rest of the cap."""
        # The first trial in plan order whose concurrency limits have room (a skip needs none).
        trial = next(
            (
                t
                for t in self._queue
                if t.variant.label in self.skipped_harnesses or self.slots.free(t.variant)
            ),
            None,
        )
        if trial is None:
            return None
        spend = self.gate.before(trial)
        if spend.action == "wait" and in_flight:
            return None  # a running trial may cost less than its reservation
        self._queue.remove(trial)
        skip = self.skipped_harnesses.get(trial.variant.label) or spend.reason
        if skip is None:
            self.gate.started(trial)
            self.slots.take(trial.variant)
        return Next(trial, budget_usd=spend.budget_usd, skip=skip)

    def finished(self, trial: PlannedTrial, result: TrialResult) -> str | None:
        """A started trial is recorded: release its reservation. Returns a message when its
        harness turns out unable to run here (its other trials will be skipped)."""
        self.gate.finished(trial)
        self.slots.give_back(trial.variant)
        hint = result.agent.hint
        label = result.variant_label
        if result.status != "could_not_run" or not hint or label in self.skipped_harnesses:
            return None
        self.skipped_harnesses[label] = hint
        return f"{label} could not run: {hint}. Its other trials in this run are skipped."
