"""What grading needs besides the change itself: the task, its base state, where to work."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harnessdrive.sandbox.process import StopToken
from harnessdrive.sandbox.runner import Sandbox
from harnessdrive.tasks.loading import Task
from harnessdrive.workspace.setup_reuse import SetupStates
from harnessdrive.workspace.snapshot import Snapshot


@dataclass(frozen=True)
class GradingSetup:
    """Everything the grader needs besides the change itself."""

    task: Task
    snapshot: Snapshot
    scratch: Path
    """A folder of our own where the grading copy is made (removed afterwards)."""
    logs: Path
    """Where logs and junit reports go; outside the grading copy."""
    sandbox: Sandbox
    python: str
    stop: StopToken | None = None
    keep_copy: bool = False
    run_visible: bool = True
    """False skips the visible command: its counts never decide the outcome."""
    run_twin: bool = True
    """False runs no twin (grading/twin_run.py): only for a change the driver trusts (a mined
    commit's own, whose reference ``check`` later grades with one)."""
    readonly: tuple[Path, ...] = ()
    """Paths the setup and test commands may read beyond the task's own view (tasks/view.py)."""
    setup_states: SetupStates | None = None
    """Setup results to reuse (workspace/setup_reuse.py); None runs setup in every copy."""
