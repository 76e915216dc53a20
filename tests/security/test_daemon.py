"""A daemon started by an agent is gone when its trial ends: checked by pid, the run still going."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psutil
import pytest

from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task
from tests.sandboxes import require_bwrap
from tests.trial_results import planned_folder
from tests.waiting import DEADLINE, wait_until

pytestmark = [pytest.mark.security, pytest.mark.slow]

MARKER = "checked"
AWAIT_MARKER = f"until [ -e {MARKER} ]; do sleep 0.05; done"


def agents_with(marker: str) -> list[int]:
    """Pids of the shells whose script holds ``marker`` (the agents, not their sandbox's start)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        argv = proc.info["cmdline"] or []
        if argv and os.path.basename(argv[0]) in {"bash", "sh"} and marker in " ".join(argv):
            found.append(proc.pid)
    return found


def drop_marker(pid: int) -> None:
    """Let the agent that ``pid`` belongs to go on: the marker in its working folder."""
    with contextlib.suppress(FileNotFoundError):  # it is gone already: nothing to hold
        Path(f"/proc/{pid}/cwd", MARKER).touch()


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_a_daemon_dies_with_its_trial(tmp_path: Path, sandbox: str) -> None:
    if sandbox == "bwrap":
        require_bwrap()
    token = f"hd-daemon-{uuid.uuid4().hex[:10]}"
    suite = write_suite(tmp_path, [add_task("add", hidden={})])
    results = tmp_path / "results"
    # Each agent holds on until the test has seen what it needs: a marker file the test drops
    # into the agent's workspace (through /proc, which reaches it inside the sandbox too).
    daemon = (
        f"(setsid nohup bash -c 'exec -a {token} bash -c \"while :; do sleep 0.1; done\"' "
        f">/dev/null 2>&1 &); {AWAIT_MARKER}"
    )
    later = f": {token}-later; {AWAIT_MARKER}"  # keeps the run going until the checks are done
    command = [
        sys.executable, "-m", "harnessdrive.cli", "run", str(suite),
        "--cmd", f"daemon={daemon}", "--cmd", f"later={later}",
        "--sandbox", sandbox, "--results", str(results),
    ]  # fmt: skip
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen: dict[int, float] = {}

    def daemons() -> dict[int, float]:
        for proc in psutil.process_iter(["cmdline", "create_time"]):
            if proc.info["cmdline"] and proc.info["cmdline"][0] == token:
                seen[proc.pid] = proc.info["create_time"]
        return seen

    (first, *_) = wait_until(daemons, "the daemon", process=driver)
    drop_marker(first)
    result = planned_folder(results, suite, "add/daemon/r1") / "result.json"
    wait_until(result.exists, "the daemon's trial recorded", process=driver)
    later_agent = wait_until(lambda: agents_with(f"{token}-later"), "the later agent")
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
    drop_marker(later_agent[0])
    driver.communicate(timeout=DEADLINE)
    assert driver.returncode == 0
    assert os.path.exists(planned_folder(results, suite, "add/later/r1") / "result.json")
