"""How processes run: environment policy, wall-clock deadlines, whole-tree kill."""

from harnessdrive.sandbox.env import base_environment, is_session_variable
from harnessdrive.sandbox.process import ProcessResult, StopToken, kill_tree, run_process
from harnessdrive.sandbox.runner import Isolation, Sandbox, get_sandbox

__all__ = [
    "Isolation",
    "ProcessResult",
    "Sandbox",
    "StopToken",
    "base_environment",
    "get_sandbox",
    "is_session_variable",
    "kill_tree",
    "run_process",
]
