"""``harnessdrive watch RESULTS`` follows a run from another process until it ends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.integration.spending import make_suite, spender
from tests.waiting import trials_under_way, wait_until


def test_watch_follows_a_running_job_from_another_terminal(tmp_path: Path) -> None:
    slow = spender("slow", seconds=1.5, uses_model=False)
    suite = make_suite(tmp_path, [slow], tasks=4)
    results = tmp_path / "results"
    hd = [sys.executable, "-m", "harnessdrive"]
    run = [*hd, "run", str(suite), "--results", str(results), "--sandbox", "none"]
    run += ["--allow-unpriced", "slow", "--max-usd", "1"]
    driver = subprocess.Popen(run, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: trials_under_way(results) or None, "a trial under way", process=driver)
        watcher = subprocess.run(
            [*hd, "watch", str(results)], capture_output=True, text=True, timeout=300
        )
    finally:
        _, error = driver.communicate(timeout=300)
    assert driver.returncode == 0, error[-2000:]
    assert watcher.returncode == 0, watcher.stderr
    lines = watcher.stdout.splitlines()

    def at(kind: str, task: str) -> list[int]:
        return [
            n
            for n, line in enumerate(lines)
            if line.split()[0] == kind and f"/{task}/slow/r1" in line.split()[1]
        ]

    # It ended with the run, having seen every trial finish once, with its verdict; the last
    # trial started while it watched, so it saw it start first.
    for task in ("t0", "t1", "t2", "t3"):
        (finished,) = at("finished", task)
        assert "completed pass" in lines[finished]
        assert all(n < finished for n in at("started", task))
    assert len(at("started", "t3")) == 1
    once = subprocess.run([*hd, "watch", str(results), "--once"], capture_output=True, text=True)
    assert once.returncode == 0 and len(once.stdout.splitlines()) == 4
