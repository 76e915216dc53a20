"""harnessdrive: test-drive AI coding-agent harnesses on the same tasks.

The public API, for script authors and plugin authors; everything else is internal and may
change. Test doubles (scripted model server, scripted agents, repository builder) are in
:mod:`harnessdrive.testing`.
"""

from harnessdrive.errors import HarnessdriveError, PluginError, UserError
from harnessdrive.executors.base import (
    Executor,
    ExecutorEntry,
    JobResult,
    TrialJob,
    TrialSettings,
    WorkerSettings,
)
from harnessdrive.grading.kinds.base import GraderKind, GradingCopy, grader_kind
from harnessdrive.grading.verdict import Finding, GraderRef, GradingRun, Verdict
from harnessdrive.harnesses.base import (
    AgentRequest,
    AgentRun,
    Harness,
    HarnessInfo,
    ModelPlan,
    PlannedModel,
)
from harnessdrive.harnesses.cli.agent_cli import AgentCli
from harnessdrive.harnesses.cli.cli_run import CliRun, Collected, Launch
from harnessdrive.harnesses.cli.options import CliOptions
from harnessdrive.harnesses.cli.recording import TranscriptBuilder
from harnessdrive.harnesses.entry import HarnessEntry
from harnessdrive.harnesses.options import HarnessOptions, NoOptions, parse_options
from harnessdrive.harnesses.registry import available as available_harnesses
from harnessdrive.harnesses.registry import get_harness
from harnessdrive.plugins.hookspecs import hookimpl
from harnessdrive.protocols.base import (
    ProtocolInputs,
    ProtocolOutcome,
    RoundOutcome,
    TrialProtocol,
)
from harnessdrive.report.loading import list_runs, load_report
from harnessdrive.report.render import render_report
from harnessdrive.report.renderers import Reporter, reporter
from harnessdrive.report.scoreboard import Report, build_report
from harnessdrive.running.plan import Plan, make_plan
from harnessdrive.running.run import RunDriver, RunOptions, RunSummary, execute
from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import Isolation, Network, Sandbox
from harnessdrive.store.results import RoundRecord, TrialResult
from harnessdrive.tasks import Suite, Task, VariantSpec, load_suite, load_task
from harnessdrive.tasks.models import GradeSpec
from harnessdrive.transcript import Event, ModelCall, Transcript, Usage

__version__ = "0.1.0"
from harnessdrive.pytest_plugin.case import evalcase

__all__ = [
    "AgentCli",
    "AgentRequest",
    "AgentRun",
    "CliOptions",
    "CliRun",
    "Collected",
    "Event",
    "Executor",
    "ExecutorEntry",
    "Finding",
    "GradeSpec",
    "GraderKind",
    "GraderRef",
    "GradingCopy",
    "GradingRun",
    "Harness",
    "HarnessEntry",
    "HarnessInfo",
    "HarnessOptions",
    "HarnessdriveError",
    "Isolation",
    "JobResult",
    "Launch",
    "ModelCall",
    "ModelPlan",
    "Network",
    "NoOptions",
    "Plan",
    "PlannedModel",
    "PluginError",
    "ProtocolInputs",
    "ProtocolOutcome",
    "Report",
    "Reporter",
    "RoundOutcome",
    "RoundRecord",
    "RunDriver",
    "RunOptions",
    "RunSummary",
    "Sandbox",
    "StopToken",
    "Suite",
    "Task",
    "Transcript",
    "TranscriptBuilder",
    "TrialJob",
    "TrialProtocol",
    "TrialResult",
    "TrialSettings",
    "Usage",
    "UserError",
    "VariantSpec",
    "Verdict",
    "WorkerSettings",
    "__version__",
    "available_harnesses",
    "build_report",
    "evalcase",
    "execute",
    "get_harness",
    "grader_kind",
    "hookimpl",
    "list_runs",
    "load_report",
    "load_suite",
    "load_task",
    "make_plan",
    "parse_options",
    "render_report",
    "reporter",
]
