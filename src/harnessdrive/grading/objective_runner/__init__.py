"""The objective runner: a parent that measures a workload it never imports, and reports the
value over a channel the measured code cannot write (docs/improvement.md, "The objective
runner"). Its two files are standalone scripts, installed read-only beside every measuring copy:
``measure.py`` is the parent, ``harnessdrive_objective.py`` the workload's side of the operation
counter."""

from __future__ import annotations

from pathlib import Path

PARENT = "measure.py"
CHILD_MODULE = "harnessdrive_objective.py"
REPORT_KEY = "harnessdrive-objective"
"""The key of the parent's report line, whose value is the measurement's token."""
MODES = ("seconds", "cpu-seconds", "peak-memory-kb", "operations")


def install_runner(folder: Path) -> Path:
    """Write the runner's files into ``folder``; return the parent script."""
    folder.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).parent
    for name in (PARENT, CHILD_MODULE):
        (folder / name).write_bytes((here / name).read_bytes())
    return folder / PARENT
