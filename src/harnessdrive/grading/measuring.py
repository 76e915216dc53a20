"""The in-loop evaluator's measurement: the objective alone, on a copy of the agent's state.

Never the gate and never the hidden tests: the copy is built like any further grading copy (the
base state, the change minus protected, restored and hidden paths, the task's setup), without
the hidden files, and only the objective's command runs there. What fails in the machinery
comes back as a measurement with an error that says so; it never raises.
"""

from __future__ import annotations

from harnessdrive.errors import ChangeError, HarnessdriveError
from harnessdrive.grading.context import GradingSetup
from harnessdrive.grading.copying import fresh_copy, split_change
from harnessdrive.grading.objective import OBJECTIVE_LABEL, Measurement, measure
from harnessdrive.sandbox.clock import now
from harnessdrive.workspace.changes import Changes


def measure_change(setup: GradingSetup, changes: Changes) -> Measurement:
    """The task's objective measured on ``changes``, in a copy of its own under
    ``setup.scratch`` (removed afterwards); its logs go to ``setup.logs``."""
    improve = setup.task.spec.improve
    if improve is None:
        return Measurement(error="the task has no [improve] objective")
    setup.logs.mkdir(parents=True, exist_ok=True)
    try:
        split = split_change(setup, changes)
        with fresh_copy(setup, split, now(), OBJECTIVE_LABEL) as copy:
            if copy is None:
                return Measurement(error="setup failed after the change of a dependency file")
            return measure(copy, improve.objective, setup.task.folder)
    except ChangeError as exc:
        return Measurement(error=f"the change cannot be read: {exc}")
    except HarnessdriveError as exc:
        return Measurement(error=f"the measuring machinery failed: {exc}", machinery=True)
