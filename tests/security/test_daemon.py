"""A daemon started by an agent is gone when its trial ends: checked by pid, the run still going."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task
from tests.sandboxes import require_bwrap
from tests.trial_results import planned_folder

pytestmark = [pytest.mark.security, pytest.mark.slow]


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_a_daemon_dies_with_its_trial(tmp_path: Path, sandbox: str) -> None:
    if sandbox == "bwrap":
        require_bwrap()
    token = f"hd-daemon-{uuid.uuid4().hex[:10]}"
    suite = write_suite(tmp_path, [add_task("add", hidden={})])
    results = tmp_path / "results"
    daemon = (
        f"(setsid nohup bash -c 'exec -a {token} bash -c \"while :; do sleep 0.1; done\"' "
        ">/dev/null 2>&1 &); sleep 0.5"
    )
    later = "sleep 3"  # keeps the run going after the daemon's trial has ended
    command = [
        sys.executable, "-m", "harnessdrive.cli", "run", str(suite),
        "--cmd", f"daemon={daemon}", "--cmd", f"later={later}",
        "--sandbox", sandbox, "--results", str(results),
    ]  # fmt: skip
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen: dict[int, float] = {}
    result = planned_folder(results, suite, "add/daemon/r1") / "result.json"
    deadline = time.monotonic() + 120
    while not result.exists() and time.monotonic() < deadline:
        for proc in psutil.process_iter(["cmdline", "create_time"]):
            if proc.info["cmdline"] and proc.info["cmdline"][0] == token:
                seen[proc.pid] = proc.info["create_time"]
        time.sleep(0.02)
    assert seen, "the daemon never started"
    assert driver.poll() is None, "the run should still be going"
    # The trial is recorded: every daemon pid seen is gone (or reused by someone else).
    for pid, created in seen.items():
        try:
            proc = psutil.Process(pid)
            # (A zombie is dead; this machine's pid 1 may just not have reaped it yet.)
            alive = proc.create_time() == created and proc.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            alive = False
        assert not alive, f"daemon {pid} outlived its trial"
    driver.communicate(timeout=120)
    assert driver.returncode == 0
    assert os.path.exists(planned_folder(results, suite, "add/later/r1") / "result.json")
