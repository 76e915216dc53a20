"""harnessdrive: test-drive AI coding-agent harnesses on the same tasks.

The public API, for script authors and plugin authors; everything else is internal and may
change. Test doubles (scripted model server, scripted agents, repository builder) are in
:mod:`harnessdrive.testing`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from harnessdrive.audit.exploits import Exploit
    from harnessdrive.errors import GradingError, HarnessdriveError, PluginError, UserError
    from harnessdrive.executors.interface import Executor, ExecutorEntry
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
    from harnessdrive.protocols.round import run_round
    from harnessdrive.pytest_plugin.case import evalcase
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
    from harnessdrive.trial.core import run_job
    from harnessdrive.trial.job import (
        JobResult,
        TrialJob,
        TrialSettings,
        WorkerSettings,
    )
    from harnessdrive.trial.worker import WorkerContext

_PUBLIC: dict[str, tuple[str, str]] = {
    "AgentCli": ("harnessdrive.harnesses.cli.agent_cli", "AgentCli"),
    "AgentRequest": ("harnessdrive.harnesses.base", "AgentRequest"),
    "AgentRun": ("harnessdrive.harnesses.base", "AgentRun"),
    "CliOptions": ("harnessdrive.harnesses.cli.options", "CliOptions"),
    "CliRun": ("harnessdrive.harnesses.cli.cli_run", "CliRun"),
    "Collected": ("harnessdrive.harnesses.cli.cli_run", "Collected"),
    "Event": ("harnessdrive.transcript", "Event"),
    "Executor": ("harnessdrive.executors.interface", "Executor"),
    "ExecutorEntry": ("harnessdrive.executors.interface", "ExecutorEntry"),
    "Exploit": ("harnessdrive.audit.exploits", "Exploit"),
    "Finding": ("harnessdrive.grading.verdict", "Finding"),
    "GradeSpec": ("harnessdrive.tasks.models", "GradeSpec"),
    "GraderKind": ("harnessdrive.grading.kinds.base", "GraderKind"),
    "GraderRef": ("harnessdrive.grading.verdict", "GraderRef"),
    "GradingCopy": ("harnessdrive.grading.kinds.base", "GradingCopy"),
    "GradingError": ("harnessdrive.errors", "GradingError"),
    "GradingRun": ("harnessdrive.grading.verdict", "GradingRun"),
    "Harness": ("harnessdrive.harnesses.base", "Harness"),
    "HarnessEntry": ("harnessdrive.harnesses.entry", "HarnessEntry"),
    "HarnessInfo": ("harnessdrive.harnesses.base", "HarnessInfo"),
    "HarnessOptions": ("harnessdrive.harnesses.options", "HarnessOptions"),
    "HarnessdriveError": ("harnessdrive.errors", "HarnessdriveError"),
    "Isolation": ("harnessdrive.sandbox.runner", "Isolation"),
    "JobResult": ("harnessdrive.trial.job", "JobResult"),
    "Launch": ("harnessdrive.harnesses.cli.cli_run", "Launch"),
    "ModelCall": ("harnessdrive.transcript", "ModelCall"),
    "ModelPlan": ("harnessdrive.harnesses.base", "ModelPlan"),
    "Network": ("harnessdrive.sandbox.runner", "Network"),
    "NoOptions": ("harnessdrive.harnesses.options", "NoOptions"),
    "Plan": ("harnessdrive.running.plan", "Plan"),
    "PlannedModel": ("harnessdrive.harnesses.base", "PlannedModel"),
    "PluginError": ("harnessdrive.errors", "PluginError"),
    "ProtocolInputs": ("harnessdrive.protocols.base", "ProtocolInputs"),
    "ProtocolOutcome": ("harnessdrive.protocols.base", "ProtocolOutcome"),
    "Report": ("harnessdrive.report.scoreboard", "Report"),
    "Reporter": ("harnessdrive.report.renderers", "Reporter"),
    "RoundOutcome": ("harnessdrive.protocols.base", "RoundOutcome"),
    "RoundRecord": ("harnessdrive.store.results", "RoundRecord"),
    "RunDriver": ("harnessdrive.running.run", "RunDriver"),
    "RunOptions": ("harnessdrive.running.run", "RunOptions"),
    "RunSummary": ("harnessdrive.running.run", "RunSummary"),
    "Sandbox": ("harnessdrive.sandbox.runner", "Sandbox"),
    "StopToken": ("harnessdrive.sandbox.process", "StopToken"),
    "Suite": ("harnessdrive.tasks", "Suite"),
    "Task": ("harnessdrive.tasks", "Task"),
    "Transcript": ("harnessdrive.transcript", "Transcript"),
    "TranscriptBuilder": ("harnessdrive.harnesses.cli.recording", "TranscriptBuilder"),
    "TrialJob": ("harnessdrive.trial.job", "TrialJob"),
    "TrialProtocol": ("harnessdrive.protocols.base", "TrialProtocol"),
    "TrialResult": ("harnessdrive.store.results", "TrialResult"),
    "TrialSettings": ("harnessdrive.trial.job", "TrialSettings"),
    "Usage": ("harnessdrive.transcript", "Usage"),
    "UserError": ("harnessdrive.errors", "UserError"),
    "VariantSpec": ("harnessdrive.tasks", "VariantSpec"),
    "Verdict": ("harnessdrive.grading.verdict", "Verdict"),
    "WorkerContext": ("harnessdrive.trial.worker", "WorkerContext"),
    "WorkerSettings": ("harnessdrive.trial.job", "WorkerSettings"),
    "available_harnesses": ("harnessdrive.harnesses.registry", "available"),
    "build_report": ("harnessdrive.report.scoreboard", "build_report"),
    "evalcase": ("harnessdrive.pytest_plugin.case", "evalcase"),
    "execute": ("harnessdrive.running.run", "execute"),
    "get_harness": ("harnessdrive.harnesses.registry", "get_harness"),
    "grader_kind": ("harnessdrive.grading.kinds.base", "grader_kind"),
    "hookimpl": ("harnessdrive.plugins.hookspecs", "hookimpl"),
    "list_runs": ("harnessdrive.report.loading", "list_runs"),
    "load_report": ("harnessdrive.report.loading", "load_report"),
    "load_suite": ("harnessdrive.tasks", "load_suite"),
    "load_task": ("harnessdrive.tasks", "load_task"),
    "make_plan": ("harnessdrive.running.plan", "make_plan"),
    "parse_options": ("harnessdrive.harnesses.options", "parse_options"),
    "render_report": ("harnessdrive.report.render", "render_report"),
    "reporter": ("harnessdrive.report.renderers", "reporter"),
    "run_job": ("harnessdrive.trial.core", "run_job"),
    "run_round": ("harnessdrive.protocols.round", "run_round"),
}
"""Each public name and where it lives. They are imported on first use, so ``import
harnessdrive`` (as every eval file does) costs nothing until a name is needed."""


def __getattr__(name: str) -> Any:
    where = _PUBLIC.get(name)
    if where is None:
        raise AttributeError(f"module 'harnessdrive' has no attribute {name!r}")
    value = getattr(import_module(where[0]), where[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


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
    "Exploit",
    "Finding",
    "GradeSpec",
    "GraderKind",
    "GraderRef",
    "GradingCopy",
    "GradingError",
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
    "WorkerContext",
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
    "run_job",
    "run_round",
]
