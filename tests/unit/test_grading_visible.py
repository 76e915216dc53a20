"""The visible command runs in a grading copy of its own, beside the deciding run, unable to
reach it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.verdict import GradingRun, SetupRun, Verdict
from harnessdrive.sandbox.runner import SandboxKind, get_sandbox
from harnessdrive.tasks import load_task
from harnessdrive.testing.suites import write_task
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.materialize import copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot
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
    # Time in which both ran counts once in the grading's command time (the trial's overhead).
    both = verdict.visible.seconds + verdict.hidden.seconds
    assert verdict.visible.started is not None and verdict.hidden.started is not None
    assert verdict.command_seconds < both


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


def test_overlapping_runs_count_once_in_the_command_time() -> None:
    def run(started: float | None, seconds: float) -> GradingRun:
        return GradingRun(
            command="c",
            exit_code=0,
            timed_out=False,
            seconds=seconds,
            passed=1,
            total=1,
            source="exit_code",
            started=started,
        )

    setup = SetupRun(commands=("s",), exit_code=0, timed_out=False, seconds=0.5)
    overlapping = Verdict(outcome="pass", visible=run(1.0, 2.0), hidden=run(0.5, 1.0), setup=setup)
    assert overlapping.command_seconds == 0.5 + 2.5
    apart = Verdict(outcome="pass", visible=run(0.0, 1.0), hidden=run(2.0, 1.0))
    assert apart.command_seconds == 2.0
    stored_before = Verdict(outcome="pass", visible=run(None, 2.0), hidden=run(None, 1.0))
    assert stored_before.command_seconds == 3.0


def test_the_visible_run_is_left_out_when_not_wanted(tmp_path: Path) -> None:
    task = load_task(write_task(tmp_path / "tasks", add_task(visible_command="{python} -c 0")))
    snapshot = build_snapshot(task.repo_path, None, tmp_path / "snap")
    workspace = copy_snapshot(snapshot, tmp_path / "ws")
    fix(workspace)
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(
        task=task,
        snapshot=snapshot,
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        sandbox=get_sandbox("none"),
        python=sys.executable,
        run_visible=False,
    )
    verdict = grade(setup, capture_changes(snapshot, workspace))
    assert verdict.outcome == "pass"
    assert verdict.visible is None
    assert not (tmp_path / "logs" / "grade-visible.log").exists()
    assert (tmp_path / "logs" / "grade-tests.log").is_file()
    # The planted tests fail by design: the log says which they are, so that no reader takes
    # their FAILED lines for the task's own.
    log = (tmp_path / "logs" / "grade-tests.log").read_text()
    note = log.strip().splitlines()[-1]
    assert note.startswith("# harnessdrive planted tests of known outcome") and "planted to" in note
    failed = re.findall(r"FAILED \S+::(\w+)", log)
    assert failed and all(name in note for name in failed)
    named = set(re.findall(r"\w+", note))
    assert "test_more" not in named and "test_negative" not in named  # the task's own tests
