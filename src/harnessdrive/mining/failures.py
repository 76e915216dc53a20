"""Why a setup or a test run failed at HEAD, in one sentence read from its log.

A message that guesses ("a missing module or command") sends the user the wrong way when the
cause is elsewhere (no network during setup, an unset variable the tests read). These functions
say what the log shows: the step that failed and its exit status, and a cause only where the log
names one.
"""

from __future__ import annotations

import re
from pathlib import Path

from harnessdrive.errors import GradingError
from harnessdrive.grading.junit import read_cases
from harnessdrive.grading.verdict import SetupRun

_STEP = re.compile(r"^\$ (.+)$", re.MULTILINE)
_OFFLINE = re.compile(
    r"Temporary failure in name resolution|Failed to establish a new connection|Network is"
    r" unreachable|getaddrinfo|EAI_AGAIN|ENOTFOUND|ENETUNREACH|Could not resolve host"
    r"|\(from versions: none\)|No matching distribution found"
)
_MISSING = re.compile(
    r"No module named '[\w.]+'|command not found|: not found$|ModuleNotFoundError[^\n]*",
    re.MULTILINE,
)
_ENVSETUP = re.compile(r"^environment setup failed: (.+)$", re.MULTILINE)
MAX_NAMED_TESTS = 5


def _read(log: Path) -> str:
    try:
        return log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def explain_setup_failure(run: SetupRun | None, log: Path, *, network: bool, timeout: float) -> str:
    """``the setup step `X` exited with status 1: it could not reach the package registry...``"""
    text = _read(log)
    steps = _STEP.findall(text)
    step = steps[-1].strip() if steps else (run.commands[-1] if run and run.commands else "")
    shown = step if len(step) <= 200 else step[:197] + "..."
    if run is not None and run.timed_out:
        return f"the setup step `{shown}` did not finish within {timeout:g} s"
    status = run.exit_code if run is not None else None
    said = f"the setup step `{shown}` " + (
        f"exited with status {status}" if status is not None else "failed"
    )
    inner = _ENVSETUP.findall(text)
    if inner:
        said += f" ({inner[-1].strip()})"
    if _OFFLINE.search(text):
        if network:
            return said + ": it could not reach the package registry (see the log)"
        return (
            said + ": it tried to download from a package registry, and setup has no network"
            " unless you pass --setup-network (it still runs in the sandbox, and installs"
            " into the copy)"
        )
    missing = _MISSING.findall(text)
    if missing:
        return said + f": {missing[-1].strip()}"
    return said


def failing_tests(logs: Path) -> list[str]:
    """The tests a run's junit report in ``logs`` shows failing (``file::name``), if any."""
    reports = sorted(logs.glob("junit-*.xml"))
    if not reports:
        return []
    try:
        cases = read_cases(reports[-1])
    except GradingError:
        return []
    return [
        f"{c.classname}::{c.name}" if c.classname else c.name
        for c in cases
        if c.outcome in ("failed", "error")
    ]


def explain_test_failure(logs: Path) -> str:
    """``3 tests fail: a::b, c::d, ...`` where the report names them, else nothing."""
    failing = failing_tests(logs)
    if not failing:
        return ""
    named = ", ".join(failing[:MAX_NAMED_TESTS])
    more = f" and {len(failing) - MAX_NAMED_TESTS} more" if len(failing) > MAX_NAMED_TESTS else ""
    tests = "test fails" if len(failing) == 1 else "tests fail"
    return f"{len(failing)} {tests}: {named}{more}"
