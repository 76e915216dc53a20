"""The visible command runs in a grading copy of its own, beside the deciding run, unable to
reach it."""

from __future__ import annotations

from pathlib import Path

from harnessdrive.sandbox.runner import SandboxKind
from tests.conftest import add_task
from tests.sandboxes import require_bwrap
from tests.unit.test_grading import fix, run_grader

# Each side announces itself, then waits for the other: only runs that overlap both see it.
MEET = """
import pathlib, sys, time
here = pathlib.Path(sys.argv[1])
(here / sys.argv[2]).touch()
other = here / sys.argv[3]
deadline = time.monotonic() + 60
while not other.exists() and time.monotonic() < deadline:
    time.sleep(0.02)
sys.exit(0 if other.exists() else 1)
"""

# Exit 0 only when nothing of the deciding run is in sight: its copy (beside this copy's own
# scratch folder) or a process working in it.
LOOK = """
import os, pathlib, sys
copy = pathlib.Path(sys.argv[1])
deciding = copy.parent.parent / "grading-copy"
seen = []
for pid in os.listdir("/proc"):
    try:
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        continue
    if "grading-copy" in cwd and not cwd.startswith(str(copy)):
        seen.append(cwd)
print(deciding, deciding.exists(), seen)
sys.exit(1 if deciding.exists() or seen else 0)
"""


def test_the_visible_run_overlaps_the_deciding_run(tmp_path: Path) -> None:
    meet = tmp_path / "meet"
    meet.mkdir()
    task = add_task(
        files={**add_task().files, "meet.py": MEET},
        command=f"{{python}} meet.py {meet} deciding visible",
        visible_command=f"{{python}} meet.py {meet} visible deciding",
        grade_timeout=90,
        extra={"grade": {"junit": False}},
    )
    verdict = run_grader(tmp_path, task, fix, kind="none")
    assert verdict.visible is not None and verdict.hidden is not None
    assert (verdict.visible.exit_code, verdict.visible.timed_out) == (0, False), verdict
    assert verdict.outcome == "pass", verdict


def _look(tmp_path: Path, kind: SandboxKind) -> int | None:
    task = add_task(
        files={**add_task().files, "look.py": LOOK},
        visible_command="{python} look.py {workspace}",
        grade_timeout=90,
    )
    verdict = run_grader(tmp_path, task, fix, kind=kind)
    assert verdict.outcome == "pass"
    assert verdict.visible is not None
    return verdict.visible.exit_code


def test_the_visible_run_cannot_see_the_deciding_copy_under_bubblewrap(tmp_path: Path) -> None:
    require_bwrap()
    assert _look(tmp_path, "bwrap") == 0


def test_without_a_sandbox_the_deciding_copy_is_in_sight(tmp_path: Path) -> None:
    # The check above can fail: with no sandbox the same command finds the deciding copy.
    assert _look(tmp_path, "none") == 1
