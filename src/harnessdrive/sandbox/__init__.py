"""How processes run: sandbox back-ends, environment policy, deadlines, limits, whole-tree kill."""

from harnessdrive.sandbox.env import base_environment, clean_path, is_session_variable
from harnessdrive.sandbox.limits import Limits, default_limits
from harnessdrive.sandbox.process import ProcessResult, StopToken, run_process
from harnessdrive.sandbox.runner import (
    Isolation,
    Sandbox,
    SandboxSettings,
    describe_sandbox,
    get_sandbox,
)
from harnessdrive.sandbox.tree import kill_tree

__all__ = [
    "Isolation",
    "Limits",
    "ProcessResult",
    "Sandbox",
    "SandboxSettings",
    "StopToken",
    "base_environment",
    "clean_path",
    "default_limits",
    "describe_sandbox",
    "get_sandbox",
    "is_session_variable",
    "kill_tree",
    "run_process",
]
