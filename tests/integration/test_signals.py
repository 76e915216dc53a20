"""SIGINT, SIGTERM, SIGHUP: exit 130, the trial ``interrupted``, its workspace gone; the same
command resumes. And without bubblewrap, ``--sandbox none`` still works and says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from harnessdrive.store.store import Store
from harnessdrive.testing.suites import write_suite
from tests.conftest import GRADE_WITHOUT_RUNNER, add_task
from tests.integration.test_crash_recovery import our_processes
from tests.sandboxes import require_bwrap
from tests.trial_results import trial_folder, trial_id_of
from tests.waiting import DEADLINE, descendants_running, wait_until


def harnessdrive(*args: str) -> list[str]:
    return [sys.executable, "-m", "harnessdrive.cli", *args]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "sandbox"),
    [(signal.SIGINT, "bwrap"), (signal.SIGTERM, "bwrap"), (signal.SIGHUP, "none")],
)
def test_a_stop_signal_records_interrupted_and_the_same_command_resumes(
    tmp_path: Path, sig: signal.Signals, sandbox: str
) -> None:
    if sandbox == "bwrap":
        require_bwrap()
    token = f"hd-signal-{uuid.uuid4().hex[:10]}"
    suite = write_suite(tmp_path, [add_task("add", hidden={}, command=GRADE_WITHOUT_RUNNER)])
    results = tmp_path / "results"
    system_tmp = tmp_path / "systmp"
    system_tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(system_tmp)}
    fix = f": {token}; sleep 2; printf 'def add(a, b):\\n    return a + b\\n' > calc.py"
    command = harnessdrive(
        "run", str(suite), "--cmd", f"slow={fix}", "--sandbox", sandbox, "--results", str(results)
    )
    driver = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # The agent is at work: its script has reached its sleep, before it writes the fix.
    wait_until(
        lambda: descendants_running(driver.pid, ["sleep", "2"]), "the agent's sleep", process=driver
    )
    driver.send_signal(sig)
    out, err = driver.communicate(timeout=DEADLINE)  # how fast: benchmarks/stopping.py
    assert driver.returncode == 130, err
    assert "run the same command again" in out
    result = json.loads((trial_folder(results, "suite/add/slow/r1") / "result.json").read_text())
    assert result["status"] == "interrupted" and result["outcome"] == "not_graded"
    assert result["cost"]["source"] == "unmeasured"  # what it spent: nothing measurable here
    assert not list((results / "inflight").glob("*.json"))
    assert our_processes(token) == [] and list(system_tmp.iterdir()) == []

    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    latest = Store(results).latest(trial_id_of(results, "suite/add/slow/r1"))
    assert latest is not None and latest.outcome == "pass" and latest.attempt == 2
    assert list(system_tmp.iterdir()) == []


def _path_without_bwrap(tmp_path: Path) -> str:
    """A PATH holding every tool of this machine except bubblewrap."""
    bin_dir = tmp_path / "bin-without-bwrap"
    bin_dir.mkdir()
    for folder in [*os.environ.get("PATH", "").split(os.pathsep), "/usr/bin", "/bin"]:
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            if entry.name != "bwrap" and not (bin_dir / entry.name).exists():
                (bin_dir / entry.name).symlink_to(entry.path)
    return str(bin_dir)


@pytest.mark.slow
def test_without_bubblewrap_runs_go_on_with_none_and_say_so(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [add_task("add")])
    env = {**os.environ, "PATH": _path_without_bwrap(tmp_path)}
    results = tmp_path / "results"
    reference = ["run", str(suite), "-H", "reference", "--results", str(results), "--json"]
    out = subprocess.run(harnessdrive(*reference), env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["sandbox"] == ["none"]
    assert any("Ran without a sandbox" in note for note in report["notes"])
    refused = subprocess.run(
        harnessdrive(*reference, "--sandbox", "bwrap"), env=env, capture_output=True, text=True
    )
    assert refused.returncode == 2
    assert "bubblewrap (bwrap) is not installed" in refused.stderr
    doctor = subprocess.run(harnessdrive("doctor"), env=env, capture_output=True, text=True)
    assert "none: no sandbox (bubblewrap (bwrap) is not installed)" in " ".join(
        doctor.stdout.split()
    )
