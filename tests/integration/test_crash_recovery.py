"""A driver killed with ``kill -9`` at random moments resumes to a complete, consistent result.

Every trial recorded exactly once, in-flight ones charged and run again, no stray processes and no
scratch folders left. The moments come from a seeded generator; the seed is printed, and
``HARNESSDRIVE_KILL_SEED`` replays a failure.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import psutil
import pytest

from harnessdrive.store.index import dump
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store
from harnessdrive.testing.suites import write_suite
from tests.conftest import GRADE_WITHOUT_RUNNER, add_task
from tests.sandboxes import require_bwrap
from tests.trial_results import planned_folder
from tests.waiting import trials_under_way, wait_until

TASKS = 10
REPEAT = 2
KILLS = 3


def seed() -> int:
    value = os.environ.get("HARNESSDRIVE_KILL_SEED")
    return int(value) if value else random.SystemRandom().randrange(2**31)


def our_processes(marker: str) -> list[int]:
    """Processes whose environment or command line mentions ``marker``."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if proc.pid == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{proc.pid}/environ").read_bytes()
        except OSError:
            environ = b""
        mentioned = marker.encode() in environ or marker in " ".join(proc.info["cmdline"] or [])
        try:
            if mentioned and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except psutil.Error:
            pass  # gone meanwhile
    return found


def all_results(results: Path) -> dict[str, list[TrialResult]]:
    """Every recorded attempt of every trial, latest last."""
    found: dict[str, list[TrialResult]] = {}
    for path in sorted(results.glob("trials/**/result.json")):
        result = TrialResult.model_validate_json(path.read_text())
        found.setdefault(result.trial_id, []).append(result)
    for attempts in found.values():
        attempts.sort(key=lambda r: r.attempt)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_kill_9_at_random_moments_then_the_same_command_completes(
    tmp_path: Path, sandbox: str
) -> None:
    if sandbox == "bwrap":
        require_bwrap()
    chosen = seed()
    print(f"kill -9 seed: {chosen} (set HARNESSDRIVE_KILL_SEED={chosen} to replay)")
    rng = random.Random(chosen)
    token = f"hd-kill9-{uuid.uuid4().hex[:10]}"
    # Graded without a test runner: the driver's kills and resumes are under test, not grading.
    tasks = [add_task(f"t{i}", hidden={}, command=GRADE_WITHOUT_RUNNER) for i in range(TASKS)]
    suite = write_suite(tmp_path, tasks)
    results = tmp_path / "results"
    system_tmp = tmp_path / "systmp"
    system_tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(system_tmp)}
    fix = f": {token}; sleep 0.3; printf 'def add(a, b):\\n    return a + b\\n' > calc.py"
    command = [
        sys.executable,
        "-m",
        "harnessdrive.cli",
        "run",
        str(suite),
        "--cmd",
        f"slow={fix}",
        "--repeat",
        str(REPEAT),
        "--jobs",
        "2",
        "--sandbox",
        sandbox,
        "--results",
        str(results),
    ]
    in_flight_at_kills: list[dict[str, dict[str, object]]] = []
    killed_pids = []
    for attempt in range(KILLS + 1):
        if attempt == KILLS and any(in_flight_at_kills):
            break  # enough kills, and at least one caught a trial under way
        driver = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        if attempt < KILLS:
            try:
                driver.wait(timeout=rng.uniform(0.3, 3.0))
                break  # it finished before the moment came
            except subprocess.TimeoutExpired:
                pass
        else:
            # No random moment fell inside a trial (a loaded machine starts slowly): this kill
            # comes as soon as one is under way. (The folder held no record in flight before.)
            wait_until(lambda: trials_under_way(results), "a trial under way", process=driver)
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        killed_pids.append(driver.pid)
        records = {}
        for path in results.glob("inflight/*.json"):
            record = json.loads(path.read_text())
            records[record["trial_id"]] = record
        in_flight_at_kills.append(records)
        for path in results.glob("trials/**/result.json"):
            json.loads(path.read_text())  # never half-written
        if sandbox == "bwrap":
            # The sandboxes die with their driver.
            wait_until(lambda: not our_processes(token), "the sandboxes gone with their driver")

    assert any(in_flight_at_kills), "no kill caught a trial under way"
    lock = results / "lock"
    holder = lock.read_text().strip() if lock.exists() else ""
    final = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stderr[-2000:]
    if holder:
        # The lock of the last killed driver that got as far as taking it is taken over.
        assert int(holder) in killed_pids
        assert f"from process {holder}, which is no longer running" in final.stderr

    key = planned_folder(results, suite, "").name  # the suite's identity: <name>@<hash>
    expected = {f"{key}/t{i}/slow/r{rep}" for i in range(TASKS) for rep in range(1, REPEAT + 1)}
    recorded = all_results(results)
    assert set(recorded) == expected
    for trial, attempts in recorded.items():
        numbers = [r.attempt for r in attempts]
        assert numbers == sorted(set(numbers)), (trial, numbers)
        finished = [r for r in attempts if r.status != "interrupted"]
        assert len(finished) == 1, (trial, [r.status for r in attempts])  # exactly once
        assert attempts[-1] is finished[0] and finished[0].outcome == "pass"
        assert all(r.status == "interrupted" for r in attempts[:-1])
    # Each trial in flight at a kill was charged its record's estimate, then run again.
    for records in in_flight_at_kills:
        for trial, record in records.items():
            attempt = record["attempt"]
            match = [r for r in recorded[trial] if r.attempt == attempt]
            assert match, (trial, attempt)
            if match[0].status == "interrupted":
                charged = record["interrupted"]["cost"]
                assert match[0].cost.model_dump(mode="json") == charged
                assert recorded[trial][-1].attempt > attempt
    assert not list((results / "inflight").glob("*.json"))
    store = Store(results)
    assert sorted(r.trial_id for r in store.all_latest()) == sorted(expected)
    before = dump(store.db)
    store.rebuild_index()
    assert dump(store.db) == before
    store.close()
    # Nothing of ours is left: no agent, no workspace, no scratch folder.
    assert our_processes(token) == []
    assert our_processes(str(system_tmp)) == []
    assert list(system_tmp.iterdir()) == []
