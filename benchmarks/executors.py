"""Throughput of the local pool and of Ray with 1 and 2 workers, and Ray's overhead per trial.

    python benchmarks/executors.py [--trials 16] [--agent-seconds 1.0] [--slots 2]

Needs the ``harnessdrive[ray]`` extra. Starts a local Ray cluster on 127.0.0.1 (a head that
runs nothing and two worker nodes of ``--slots`` CPUs each, like the tests), then runs the
same suite three times into fresh results folders: the local pool with ``--jobs SLOTS``, Ray
with one worker node (the second one's CPUs held by a placeholder task), and Ray with both
nodes (``--jobs 2*SLOTS``). Each trial is a scripted agent that works ``--agent-seconds``
and a one-line grading command. Prints each run's wall time and trials per minute side by
side, the time to join the cluster, and Ray's overhead per trial:
(Ray 1-worker wall − joining − local wall) × SLOTS ÷ trials, the extra time each trial kept a
slot busy (shipping the job and the task's files, the remote call, the files coming back).
Asserts nothing. On one machine both "workers" share its cores, so the second worker shows
Ray's cost of more processes rather than a cluster's gain; run it where nodes have cores of
their own to see the scaling.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harnessdrive.cli.variants import resolve_variants
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.ray_cluster import LocalRayCluster
from harnessdrive.testing.suites import TaskFiles, write_suite
from harnessdrive.trial.job import WorkerSettings


def make_suite(folder: Path, trials: int, seconds: float) -> Path:
    tasks = [
        TaskFiles(
            f"t{i}",
            files={"calc.py": "def add(a, b):\n    return a - b\n"},
            solution={"calc.py": "def add(a, b):\n    return a + b\n"},
            command="{python} -c 'import calc; assert calc.add(1, 2) == 3'",
        )
        for i in range(trials)
    ]
    worker = {
        "harness": "harnessdrive.testing.agents:SpendingAgent",
        "name": "worker",
        "options": {"seconds": seconds, "uses_model": False},
    }
    return write_suite(folder, tasks, variants=[worker])


def timed_run(suite: Path, results: Path, **options: Any) -> tuple[float, int]:
    loaded = load_suite(suite)
    plan = make_plan(loaded, resolve_variants(loaded, []), 1)
    began = time.perf_counter()
    # The scripted agent names no model: it runs at $0, so no price or cap is needed.
    unpriced = frozenset({"worker"})
    run_options = RunOptions(
        results=results, sandbox="none", allow_unpriced=unpriced, max_usd=1, **options
    )
    summary = execute(plan, run_options)
    wall = time.perf_counter() - began
    passed = sum(r.outcome == "pass" for r in summary.trials)
    return wall, passed


def joining_seconds(address: str) -> float:
    from harnessdrive.executors.ray_executor import RayExecutor

    began = time.perf_counter()
    RayExecutor(WorkerSettings(sandbox="none", address=address)).close()
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--agent-seconds", type=float, default=1.0)
    parser.add_argument("--slots", type=int, default=2, help="CPUs per Ray worker node")
    args = parser.parse_args()
    slots = args.slots
    with tempfile.TemporaryDirectory(prefix="hd-bench-exec-") as tmp:
        folder = Path(tmp)
        suite = make_suite(folder, args.trials, args.agent_seconds)
        print(f"{args.trials} trials of {args.agent_seconds:g} s agent work; starting the cluster")
        started = time.perf_counter()
        cluster = LocalRayCluster(workers=2, cpus_per_worker=slots)
        print(f"cluster up in {time.perf_counter() - started:.1f} s")
        try:
            ray_options: dict[str, Any] = {"executor": "ray", "address": cluster.address}
            joining = joining_seconds(cluster.address)
            local = timed_run(suite, folder / "local", jobs=slots)
            one = _one_worker(
                cluster, lambda: timed_run(suite, folder / "ray1", jobs=slots, **ray_options)
            )
            two = timed_run(suite, folder / "ray2", jobs=2 * slots, **ray_options)
        finally:
            cluster.stop()
    rows = [
        (f"local pool, --jobs {slots}", local),
        (f"ray, 1 worker x {slots} CPUs", one),
        (f"ray, 2 workers x {slots} CPUs", two),
    ]
    print(f"\n{'executor':<28}{'wall s':>9}{'trials/min':>12}{'passed':>8}")
    for name, (wall, passed) in rows:
        print(f"{name:<28}{wall:>9.1f}{args.trials / wall * 60:>12.1f}{passed:>8}")
    overhead = (one[0] - joining - local[0]) * slots / args.trials
    print(f"\njoining the cluster (ray.init and shutdown): {joining:.2f} s per run")
    print(f"ray overhead per trial against the local pool: {overhead:.2f} s")
    print(f"speed-up from the second worker: {one[0] / two[0]:.2f}x")


def _one_worker(cluster: LocalRayCluster, run: Any) -> tuple[float, int]:
    """Run ``run`` while a placeholder actor holds one worker node's CPUs."""
    import ray

    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    try:
        holder = ray.remote(num_cpus=cluster.cpus_per_worker)(_Holder).remote()
        ray.get(holder.ready.remote(), timeout=300)  # placed: its node runs no trial now
        result: tuple[float, int] = run()
        ray.kill(holder)
        return result
    finally:
        ray.shutdown()


class _Holder:
    def ready(self) -> bool:
        return True


if __name__ == "__main__":
    sys.exit(main())
