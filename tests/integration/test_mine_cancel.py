"""Runs beyond ``--max`` are cancelled: once the newest commit is kept with ``--max 1``, an older
commit whose test hangs before its fix is ended while it runs, not left to its time limit.

The newest commit's tests with its fix (and HEAD's) wait until the older commit's run has
started, so that run is surely in progress when the newest commit is kept; it then never ends
by itself (its test waits for a fix that is not there).
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

from harnessdrive.mining.mine import MineOptions, MineResult, mine
from harnessdrive.sandbox.process import StopToken
from harnessdrive.testing.repo_builder import RepoBuilder
from tests.waiting import DEADLINE, wait_until

TEST_COMMAND = "{python} -m pytest -q -p no:cacheprovider tests"


def test_an_older_commit_in_progress_is_ended_once_max_tasks_are_kept(tmp_path: Path) -> None:
    started = tmp_path / "the older commit's run started"
    hangs_until_ready = (
        "import pathlib\nimport time\n\nimport app\n\n\ndef test_ready():\n"
        "    if not app.READY:\n"
        f"        pathlib.Path({str(started)!r}).touch()\n"
        "    while not app.READY:  # before the fix: waits until the run is ended\n"
        "        time.sleep(0.05)\n"
    )
    waits_for_it = (
        "import pathlib\nimport time\n\nimport app\n\n\ndef test_value():\n"
        "    deadline = time.monotonic() + 120  # a bound, never a measured time\n"
        f"    while app.VALUE == 1 and not pathlib.Path({str(started)!r}).exists():\n"
        "        assert time.monotonic() < deadline\n"
        "        time.sleep(0.05)\n"
        "    assert app.VALUE == 1\n"
    )
    repo = RepoBuilder(tmp_path / "calc")
    base = "def test_ok():\n    pass\n"
    repo.commit("Start", {"app.py": "READY = False\nVALUE = 0\n", "tests/test_base.py": base})
    hangs = repo.commit(
        "Be ready",
        {"app.py": "READY = True\nVALUE = 0\n", "tests/test_ready.py": hangs_until_ready},
    )
    kept = repo.commit(
        "Set the value to one",
        {"app.py": "READY = True\nVALUE = 1\n", "tests/test_value.py": waits_for_it},
    )
    repo.checkout()
    repo.close()
    options = MineOptions(
        repo=tmp_path / "calc",
        since="2000-01-01",
        test_command=TEST_COMMAND,
        validate=True,
        max_tasks=1,
        jobs=3,  # HEAD's run and the newest commit's wait; the third worker runs the older one
        test_timeout=900,  # far beyond the wait: only a cancel ends the hanging run in time
        output=tmp_path / "suite",
    )
    stop = StopToken()
    finished: list[MineResult] = []
    mining = threading.Thread(
        daemon=True,
        target=lambda: finished.append(
            mine(options, sandbox="none", python=sys.executable, stop=stop)
        ),
    )
    mining.start()
    try:
        # Left to its time limit, the older commit's run would keep mining going for 900 s.
        wait_until(lambda: not mining.is_alive(), "mining to end once the newest commit is kept")
    finally:
        stop.stop()  # asks a run left going (the wait above failed) to end, or nothing
        mining.join(DEADLINE)
    (result,) = finished
    summary = result.summary
    assert started.exists()
    assert [t.commit for t in summary.tasks] == [kept]
    assert summary.rejected_tasks == []
    journal = (tmp_path / "suite" / "journal.jsonl").read_text().splitlines()
    checked = [json.loads(line).get("commit") for line in journal[1:]]
    assert checked == [kept]  # the hanging commit got no verdict: it was ended, not finished
    assert not (tmp_path / "suite" / "logs" / hangs[:12]).exists()
