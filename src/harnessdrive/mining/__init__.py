"""Mine tasks from a repository's own git history.

A task is a past commit that changed both source and test files: its message is the request,
its test-file changes are the hidden tests, and the rest of it is the gold patch.
"""

from __future__ import annotations

from harnessdrive.mining.candidate import Candidate, FileChange
from harnessdrive.mining.classify import FileKind, classify_path, is_dependency_file
from harnessdrive.mining.contents import (
    file_contents,
    gold_patch,
    hidden_test_contents,
    hidden_test_patch,
)
from harnessdrive.mining.history import ScanCounts, ScanResult, SkipReason, scan_history
from harnessdrive.mining.mine import MineOptions, MineResult, mine
from harnessdrive.mining.prompt import agent_prompt
from harnessdrive.mining.since import parse_since
from harnessdrive.mining.summary import (
    MiningCounts,
    MiningSummary,
    RunRecord,
    SummaryTask,
    render_summary_json,
    render_summary_markdown,
    summary_from_scan,
)
from harnessdrive.mining.test_command import DetectedCommand, detect_test_command

__all__ = [
    "Candidate",
    "DetectedCommand",
    "FileChange",
    "FileKind",
    "MineOptions",
    "MineResult",
    "MiningCounts",
    "MiningSummary",
    "RunRecord",
    "ScanCounts",
    "ScanResult",
    "SkipReason",
    "SummaryTask",
    "agent_prompt",
    "classify_path",
    "detect_test_command",
    "file_contents",
    "gold_patch",
    "hidden_test_contents",
    "hidden_test_patch",
    "is_dependency_file",
    "mine",
    "parse_since",
    "render_summary_json",
    "render_summary_markdown",
    "scan_history",
    "summary_from_scan",
]
