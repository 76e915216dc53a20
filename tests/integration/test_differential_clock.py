"""A step of the wall clock during grading neither fails nor extends a case, and one during the
agent's run makes the trial invalid.

The clock jump that matters is the host's: the wall clock of the machine running harnessdrive
stepped (an NTP correction, a manual ``date -s``, a resumed virtual machine) while a case runs.
The grader runs in a child process with a preloaded shim that shifts its CLOCK_REALTIME (and
only that, as a real step does) by whatever a file says, read again on every call; the test
steps it forward a day while one case is running, and runs it backwards while another hangs.
Had the per-case limit used the wall clock, the first case would time out at once and the hang
would never end; on the monotonic clock the first passes and the hang times out at its limit.
The candidate runs in bubblewrap without the shim: what it sees is not the point.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harnessdrive.demo import DEMO_SUITE
from tests.sandboxes import require_bwrap

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("differential-clock")]

SHIM_SOURCE = Path(__file__).parents[1] / "fixtures" / "clock" / "wallclock_shift.c"
TASK = DEMO_SUITE / "tasks" / "skiplist"
DAY = 86400
PATIENCE = 120.0
"""How long the grader may take before the test calls its case extended by the step."""

CANDIDATE = """
import os
import time

from skiplist.solution import skipped as solved

MARKS = os.environ["TMPDIR"]


def skipped(case):
    n = case.pop("n")
    open(os.path.join(MARKS, f"started-{n}"), "w").close()
    while n == 1:  # hangs: the limit must end it
        pass
    if n == 0:
        while not os.path.exists(os.path.join(MARKS, "go")):
            time.sleep(0.01)  # waits until the test has stepped the clock,
        time.sleep(1)  # then runs on, well within its limit, with the step behind it
    return solved(case)
"""

DRIVER = """
import json, sys, time
from pathlib import Path
from harnessdrive.grading.differential.casesets import CaseRow, read_case_set
from harnessdrive.grading.differential.kind import grade_candidate
from harnessdrive.grading.differential.service import agent_run_watch
from harnessdrive.tasks.loading import load_task
from tests.sandboxes import sandbox_of

task_folder, root, work, marks = map(Path, sys.argv[1:5])
task = load_task(task_folder)
spec = task.spec.grade
rows = read_case_set(task_folder / spec.cases, spec).rows[:3]
cases = tuple(
    CaseRow(id=r.id, input={**r.input, "n": n}, expected=r.expected, bucket=r.bucket)
    for n, r in enumerate(rows)
)
quick = spec.model_copy(update={"case_timeout": 5.0, "minimise": False, "static": "report"})
verdict = grade_candidate(
    quick, cases, task_folder=task_folder, root=root, work=work,
    sandbox=sandbox_of("bwrap", hidden=(task_folder,)), python=sys.executable, logs=work,
)
graded_at = time.time()
with agent_run_watch(task) as watch:
    (marks / "watching").touch()
    while not (marks / "stepped").exists():
        time.sleep(0.01)
print(json.dumps({"graded_at": graded_at, "problem": watch.problem,
                  "rows": json.loads((work / "differential.json").read_text())["rows"]}))
"""


@pytest.fixture(scope="module")
def shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the wall-clock shim")
    built = tmp_path_factory.mktemp("shim") / "wallclock_shift.so"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-o", str(built), str(SHIM_SOURCE), "-ldl"], check=True
    )
    return built


def _step(offset: Path, seconds: int) -> None:
    """Set the grader's wall clock ``seconds`` off the real one, in one atomic write (the shim
    must never read a half-written file as no offset)."""
    new = offset.with_suffix(".new")
    new.write_text(str(seconds))
    os.replace(new, offset)


def _wait_for(path: Path, driver: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + PATIENCE
    while not path.exists():
        assert driver.poll() is None, driver.communicate()
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)


def test_a_wall_clock_step_neither_fails_nor_extends_a_case(shim: Path, tmp_path: Path) -> None:
    require_bwrap()
    root, work, offset = tmp_path / "repo", tmp_path / "work", tmp_path / "offset"
    shutil.copytree(TASK / "repo", root)
    shutil.copy(TASK / "solution" / "skiplist" / "rules.py", root / "skiplist" / "solution.py")
    (root / "skiplist" / "rules.py").write_text(CANDIDATE)
    marks = work / "tmp"  # the candidate's TMPDIR
    marks.mkdir(parents=True)
    _step(offset, 0)
    env = {
        "PATH": "/usr/bin:/bin",
        "LD_PRELOAD": str(shim),
        "WALLCLOCK_SHIFT_FILE": str(offset),
        "PYTHONPATH": str(Path(__file__).parents[2]),
    }
    argv = [sys.executable, "-c", DRIVER, str(TASK), str(root), str(work), str(marks)]
    with subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as driver:
        _wait_for(marks / "started-0", driver)
        _step(offset, DAY)  # forward a day while case 0 runs
        (marks / "go").touch()
        _wait_for(marks / "started-1", driver)
        # While case 1 hangs the wall clock runs backwards, a second per second, however soon
        # the grader saw the case begin: by it, no time would ever pass.
        began, last = time.monotonic(), DAY
        while not (marks / "watching").exists():
            assert driver.poll() is None, driver.communicate()
            if time.monotonic() - began > PATIENCE:
                driver.kill()
                pytest.fail("the grader waited on while the wall clock ran backwards")
            last = DAY - 2 * int(time.monotonic() - began)
            _step(offset, last)
            time.sleep(0.01)
        _step(offset, last + DAY)  # a day forward, during the agent's run
        (marks / "stepped").touch()
        try:
            out, err = driver.communicate(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            driver.kill()
            pytest.fail("the agent's run did not end")
    assert driver.returncode == 0, err
    report = json.loads(out)
    assert report["graded_at"] > time.time() + DAY / 2  # the shim did step the grader's clock
    rows = report["rows"]
    assert [row["pass"] for row in rows] == [True, False, True]
    assert rows[1]["error"] == "timeout: over 5s"
    problem = report["problem"]
    assert problem.startswith("the wall clock jumped ") and problem.endswith(
        "s during the agent's run"
    )
    assert abs(int(problem.split()[4].removesuffix("s")) - DAY) <= 5  # give or take a backward tick
