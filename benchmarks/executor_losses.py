"""Lost work on a Ray cluster: a 200-trial run with a worker killed at random twice, against
the same run on the local pool.

    python benchmarks/executors.py --lost-work [--trials 200] [--tasks 20]

Called from benchmarks/executors.py. Each trial is the ``command`` harness running a small
agent that makes one model call through harnessdrive's proxy to the scripted model server
($0.01 of ``mock-small``), works one second and writes the fix. The tasks have a setup
command that notes where it ran. The local pool runs the suite with ``--jobs 2``; then Ray
runs it on two worker nodes of one CPU each, while a thread kills the Ray worker process of a
running trial twice, at random moments. Prints side by side: trials recorded (and recorded
more than once), lost tries, spend of each run and the difference against one trial's high
estimate, setups per node against the tasks, and scratch folders left on the machine (every
node here shares its temp folder). Asserts nothing.
"""

from __future__ import annotations

import random
import re
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psutil

from harnessdrive.cli.variants import resolve_variants
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.sandbox.scratch import MEMORY_FOLDER, PREFIX
from harnessdrive.store.results import TrialResult
from harnessdrive.store.store import Store
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.model_server import ModelServer, Script, SideReply, Turn
from harnessdrive.testing.model_server import Usage as ScriptUsage
from harnessdrive.testing.prices import MOCK_SMALL_HIGH_USD, write_mock_prices
from harnessdrive.testing.ray_cluster import LocalRayCluster
from harnessdrive.testing.suites import TaskFiles, write_suite

AGENT = """
import json, os, time, urllib.request
body = json.dumps({"model": "mock-small", "max_tokens": 9,
                   "messages": [{"role": "user", "content": "fix it"}]}).encode()
request = urllib.request.Request(
    os.environ["HARNESSDRIVE_MODEL_URL"] + "/v1/messages", data=body,
    headers={"content-type": "application/json", "x-api-key": "k"})
urllib.request.urlopen(request, timeout=30).read()
time.sleep(1)
open("calc.py", "w").write("def add(a, b):\\n    return a + b\\n")
"""


def _suite(folder: Path, tasks: int, server: ModelServer, setups: Path) -> Path:
    agent = folder / "agent.py"
    agent.write_text(AGENT)
    note = f"import os; open({str(setups)!r}, 'a').write(os.getcwd() + chr(10))"
    files = [
        TaskFiles(
            f"t{i}",
            # A file of its own: each task is a dependency state of its own.
            files={"calc.py": "def add(a, b):\n    return a - b\n", "deps.txt": f"task {i}\n"},
            solution={"calc.py": "def add(a, b):\n    return a + b\n"},
            command="{python} -c 'import calc; assert calc.add(1, 2) == 3'",
            setup=[f'{{python}} -c "{note}"'],
        )
        for i in range(tasks)
    ]
    variant = {
        "harness": "command",
        "name": "cli",
        "model": "mock-small",
        "options": {"template": f"{{python}} {agent}", "model_url": server.base_url},
    }
    return write_suite(folder, files, variants=[variant])


def _owner(path: str) -> int | None:
    named = re.search(r"-p(\d+)-[a-z0-9_]+$", path)
    return int(named[1]) if named else None


def _scratch() -> set[str]:
    found: set[str] = set()
    for folder in (Path(tempfile.gettempdir()), MEMORY_FOLDER):
        if folder.is_dir():
            found |= {str(p) for p in folder.iterdir() if p.name.startswith(PREFIX)}
    return found


def _run(suite: Path, results: Path, prices: Path, repeat: int, **options: Any) -> float:
    loaded = load_suite(suite)
    plan = make_plan(loaded, resolve_variants(loaded, []), repeat)
    run = RunOptions(
        results=results, sandbox="none", price_files=(prices,), max_usd=1000, **options
    )
    execute(plan, run)
    store = Store(results)
    try:
        return round(store.charged_total(), 6)
    finally:
        store.close()


def _killer(
    cluster: LocalRayCluster, results: Path, trials: int, killed: list[int], seen: set[int]
) -> None:
    """Kill the Ray worker process of a running trial twice, at random moments (a random
    point of its agent's second of work); note every process of the cluster meanwhile."""
    moments = sorted(random.sample(range(trials // 10, trials * 8 // 10), 2))
    for moment in moments:
        while len(list(results.glob("trials/**/result.json"))) < moment:
            seen.update(p.pid for p in cluster.processes())
            time.sleep(0.2)
        while True:
            busy = [w for w in cluster.trial_workers() if _runs_agent(w)]
            if busy:
                victim = random.choice(busy)
                time.sleep(random.uniform(0.0, 1.0))
                victim.kill()
                killed.append(victim.pid)
                break
            time.sleep(0.05)
    while True:  # until the run ends (the thread is a daemon)
        seen.update(p.pid for p in cluster.processes())
        time.sleep(0.2)


def _runs_agent(worker: psutil.Process) -> bool:
    try:
        return any("agent.py" in " ".join(c.cmdline()) for c in worker.children(recursive=True))
    except psutil.Error:
        return False


def lost_work(trials: int, tasks: int) -> None:
    repeat = max(trials // tasks, 1)
    trials = repeat * tasks
    with tempfile.TemporaryDirectory(prefix="hd-bench-lost-") as tmp:
        folder = Path(tmp)
        setups = folder / "setups.log"
        answer = SideReply(usage=ScriptUsage(input=10_000))  # $0.01 of mock-small
        with ModelServer(Script(turns=(Turn(text="ok"),), side_reply=answer)) as server:
            suite = _suite(folder, tasks, server, setups)
            prices = write_mock_prices(folder)
            print(f"{trials} trials ({tasks} tasks x {repeat}); the local pool first")
            began = time.perf_counter()
            local = _run(suite, folder / "local", prices, repeat, jobs=2)
            local_wall = time.perf_counter() - began
            setups.write_text("")
            before = _scratch()
            cluster = LocalRayCluster(workers=2, cpus_per_worker=1)
            try:
                results = folder / "ray"
                killed: list[int] = []
                seen: set[int] = set()
                killer = threading.Thread(
                    target=_killer, args=(cluster, results, trials, killed, seen), daemon=True
                )
                killer.start()
                began = time.perf_counter()
                on_ray = _run(
                    suite, results, prices, repeat, jobs=2, executor="ray", address=cluster.address
                )
                ray_wall = time.perf_counter() - began
            finally:
                cluster.stop()
            # Other programs of the machine make scratch folders too: only the cluster's count.
            left = sorted(p for p in _scratch() - before if _owner(p) in seen or "-node-" in p)
        recorded = [
            TrialResult.model_validate_json(p.read_text())
            for p in results.glob("trials/**/result.json")
        ]
        ids = Counter(r.trial_id for r in recorded)
        lost = [e for r in recorded for e in r.retries if e.reason == "worker_lost"]
        lines = [line for line in setups.read_text().splitlines() if line]
        per_node = Counter(line.split("/setup-states/")[0] for line in lines)
    print(f"\n{'':<34}{'local':>10}{'ray':>10}")
    print(f"{'wall s':<34}{local_wall:>10.1f}{ray_wall:>10.1f}")
    print(f"{'spend $':<34}{local:>10.4f}{on_ray:>10.4f}")
    print(
        f"workers killed: {len(killed)}; tries lost: {len(lost)}, charged "
        f"${sum(e.charged_usd for e in lost):.4f}"
    )
    print(
        f"trials recorded: {len(ids)} of {trials}; recorded more than once: "
        f"{sum(1 for n in ids.values() if n > 1)}; completed: "
        f"{sum(r.status == 'completed' for r in recorded)}"
    )
    print(
        f"spend difference: ${abs(on_ray - local):.4f} (one trial's high estimate: "
        f"${MOCK_SMALL_HIGH_USD:.4f}) -> "
        f"{'within' if abs(on_ray - local) <= MOCK_SMALL_HIGH_USD else 'OVER'}"
    )
    print(
        f"setups: {len(lines)} on {len(per_node)} node(s) for {tasks} tasks; most per node "
        f"{max(per_node.values(), default=0)} (one per task per node: "
        f"{'yes' if max(Counter(lines).values(), default=0) <= 1 else 'NO'})"
    )
    print(f"scratch folders left: {len(left)}" + (f" {left[:3]}" if left else ""))
