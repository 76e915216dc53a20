"""A reader that goes away (``| head``) ends our output quietly; the run records every trial."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harnessdrive.testing.suites import write_suite
from tests.conftest import GRADE_WITHOUT_RUNNER, add_task


def start_run(tmp_path: Path, **streams: int) -> subprocess.Popen[bytes]:
    suite = write_suite(tmp_path, [add_task(hidden={}, command=GRADE_WITHOUT_RUNNER)])
    argv = [
        sys.executable, "-m", "harnessdrive", "run", str(suite), "--harness", "reference,noop",
        "--repeat", "3", "--sandbox", "none", "--results", str(tmp_path / "results"),
    ]  # fmt: skip
    return subprocess.Popen(argv, **streams)


def recorded(tmp_path: Path) -> int:
    return len(list((tmp_path / "results").glob("trials/**/result.json")))


def test_a_closed_output_pipe_exits_141_quietly_after_recording(tmp_path: Path) -> None:
    run = start_run(tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert run.stdout is not None and run.stderr is not None
    run.stdout.close()  # the reader is gone before the scoreboard is written
    errors = run.stderr.read().decode()
    assert run.wait(timeout=120) == 141
    assert "Traceback" not in errors and "BrokenPipe" not in errors
    assert recorded(tmp_path) == 6


def test_a_closed_progress_pipe_does_not_stop_the_run(tmp_path: Path) -> None:
    run = start_run(tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert run.stdout is not None and run.stderr is not None
    run.stderr.close()  # whoever read the progress lines went away
    scoreboard = run.stdout.read().decode()
    assert run.wait(timeout=120) == 0
    answer = " ".join(scoreboard.split())
    assert "top: reference, 100% of tasks [" in answer and "noop inconclusive against" in answer
    assert recorded(tmp_path) == 6
