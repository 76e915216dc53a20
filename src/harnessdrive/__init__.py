"""harnessdrive: test-drive AI coding-agent harnesses on the same tasks.

The public API; everything else is internal and may change.
"""

from harnessdrive.errors import HarnessdriveError, UserError
from harnessdrive.grading.verdict import Finding, GradingRun, Verdict
from harnessdrive.harnesses.base import (
    AgentRequest,
    AgentRun,
    Harness,
    HarnessInfo,
    ModelPlan,
    PlannedModel,
)
from harnessdrive.report.scoreboard import Report, build_report
from harnessdrive.running.plan import Plan, make_plan
from harnessdrive.running.run import RunDriver, RunOptions, RunSummary, execute
from harnessdrive.store.results import TrialResult
from harnessdrive.tasks import Suite, Task, VariantSpec, load_suite, load_task
from harnessdrive.transcript import Event, ModelCall, Transcript, Usage

__version__ = "0.1.0"

__all__ = [
    "AgentRequest",
    "AgentRun",
    "Event",
    "Finding",
    "GradingRun",
    "Harness",
    "HarnessInfo",
    "HarnessdriveError",
    "ModelCall",
    "ModelPlan",
    "Plan",
    "PlannedModel",
    "Report",
    "RunDriver",
    "RunOptions",
    "RunSummary",
    "Suite",
    "Task",
    "Transcript",
    "TrialResult",
    "Usage",
    "UserError",
    "VariantSpec",
    "Verdict",
    "__version__",
    "build_report",
    "execute",
    "load_suite",
    "load_task",
    "make_plan",
]
