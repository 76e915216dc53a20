"""Time per trial spent outside the agent and the test commands, next to the bare test command.

    python benchmarks/trial_overhead.py [--tasks 20] [--command 'true']
    python benchmarks/trial_overhead.py --against OTHER_TREE [--rounds 5] [--tasks 20]

Builds a suite of small tasks (a few source files each, a fast test command), runs the built-in
``reference`` agent on every task through the real run driver, and prints:

- the bare test-command time (the same command started directly, best of several runs);
- the time to build the project's base snapshot once (shared by every trial);
- harnessdrive's overhead per trial: wall time of the whole run divided by trials, minus the
  agent's and the grading commands' own time (as each result.json records them);
- their ratio, and the per-phase overhead recorded in result.json.

``--against OTHER_TREE`` compares two source trees (this one and another checkout, say an
earlier commit's ``git archive``): each round runs the benchmark once in a fresh process per
tree, importing harnessdrive from that tree's ``src``, the order alternating between rounds;
then it prints every time, the medians and the ratio of this tree's to the other's.

Target: overhead under 50 ms per trial.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.tasks import VariantSpec, load_suite
from harnessdrive.testing.suites import TaskFiles, write_suite


def build_suite(root: Path, tasks: int, command: str) -> Path:
    """One small project (like the demo) and ``tasks`` tasks on it."""
    project = root / "bench" / "project"
    for i in range(10):
        (project / "pkg").mkdir(parents=True, exist_ok=True)
        (project / "pkg" / f"mod{i}.py").write_text(f"VALUE_{i} = {i}\n" * 20)
    (project / "pkg" / "target.py").write_text("X = 1\n")
    (project / "README.md").write_text("A small project.\n")
    return write_suite(
        root,
        [
            TaskFiles(
                f"t{n}",
                solution={"pkg/target.py": f"X = {n + 2}\n"},
                command=command,
                extra={"repo": {"path": "../../project"}},
            )
            for n in range(tasks)
        ],
        name="bench",
    )


def bare_command_seconds(command: str, cwd: Path, runs: int = 10) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(["bash", "-c", command], cwd=cwd, check=False, capture_output=True)
        times.append(time.perf_counter() - started)
    return min(times)


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (less noisy than wall time on a
    busy machine: other processes' load does not count)."""
    own, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(tasks: int, command: str) -> dict[str, float | int | str]:
    """One run of ``tasks`` trials in this process: its times, in seconds."""
    with tempfile.TemporaryDirectory(prefix="hd-bench-") as tmp:
        root = Path(tmp)
        suite = load_suite(build_suite(root, tasks, command))
        bare = bare_command_seconds(command, root)
        plan = make_plan(suite, (VariantSpec(harness="reference"),), 1)
        started, cpu_before = time.perf_counter(), cpu_seconds()
        summary = execute(plan, RunOptions(results=root / "results", sandbox="none"))
        wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu_before
        trials = summary.trials
        assert all(r.outcome == "pass" for r in trials), [r.outcome for r in trials]
        inner = sum(
            r.seconds.agent
            + sum(run.seconds for run in (r.grading.visible, r.grading.hidden) if run is not None)
            for r in trials
            if r.grading is not None
        )
        recorded = [r.seconds.overhead for r in trials]
        data = json.loads((root / "results" / "runs" / f"{summary.run_id}.json").read_text())
    count = len(data["trials"])
    return {
        "trials": count,
        "command": command,
        "bare": bare,
        "wall_per_trial": wall / count,
        "cpu_per_trial": cpu / count,
        "inner_per_trial": inner / count,
        "overhead_per_trial": (wall - inner) / count,
        "recorded_overhead": statistics.median(recorded),
    }


def print_one(times: dict[str, float | int | str]) -> None:
    bare, per_trial = float(times["bare"]), float(times["overhead_per_trial"])
    print(f"trials: {times['trials']} (one at a time), test command: {times['command']!r}")
    print(f"bare test command:                  {bare * 1000:7.1f} ms")
    print(f"agent + grading commands per trial: {float(times['inner_per_trial']) * 1000:7.1f} ms")
    print(
        f"overhead per trial, whole run:      {per_trial * 1000:7.1f} ms  (lock, snapshot, index)"
    )
    recorded = float(times["recorded_overhead"])
    print(f"overhead per trial, in result.json: {recorded * 1000:7.1f} ms  (median)")
    print(f"ratio overhead / bare test command: {per_trial / bare:7.1f}x")
    cpu = float(times["cpu_per_trial"]) * 1000
    print(f"CPU time per trial, with children:  {cpu:7.1f} ms")
    print("target: overhead under 50 ms per trial")


def in_fresh_process(tree: Path, tasks: int, command: str) -> dict[str, float | int | str]:
    """One :func:`measure` in a new interpreter that imports harnessdrive from ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    args = [sys.executable, __file__, "--tasks", str(tasks), "--command", command, "--json"]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"the benchmark failed on {tree}:\n{done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.splitlines()[-1]))


def compare(other: Path, rounds: int, tasks: int, command: str) -> None:
    this = Path(__file__).resolve().parents[1]
    trees = {"this": this, "other": other}
    series = ("wall", "overhead", "cpu")
    times: dict[str, dict[str, list[float]]] = {s: {name: [] for name in trees} for s in series}
    print(f"this tree:  {this}\nother tree: {other}")
    print(f"{tasks} trials per run, test command {command!r}, {rounds} rounds, alternating")
    for number in range(rounds):
        order = list(trees) if number % 2 == 0 else list(reversed(trees))
        for name in order:
            measured = in_fresh_process(trees[name], tasks, command)
            line = [f"round {number + 1} {name:5}"]
            for each in series:
                times[each][name].append(float(measured[f"{each}_per_trial"]))
                line.append(f"{each} {times[each][name][-1] * 1000:7.1f}")
            print("  ".join(line), "(ms per trial)", flush=True)
    for each in series:
        mine, theirs = (statistics.median(times[each][name]) for name in trees)
        print(
            f"median {each:8} per trial: this {mine * 1000:7.1f} ms, other {theirs * 1000:7.1f} ms,"
            f" this/other {mine / theirs:5.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--command", default="true", help="the test command of every task")
    parser.add_argument(
        "--against", type=Path, help="another source tree to compare with, alternating"
    )
    parser.add_argument("--rounds", type=int, default=5, help="runs per tree with --against")
    parser.add_argument("--json", action="store_true", help="print the times as one JSON line")
    args = parser.parse_args()
    if args.against is not None:
        if not (args.against / "src" / "harnessdrive").is_dir():
            sys.exit(f"--against: {args.against} holds no src/harnessdrive")
        compare(args.against.resolve(), args.rounds, args.tasks, args.command)
        return
    times = measure(args.tasks, args.command)
    if args.json:
        print(json.dumps(times))
    else:
        print_one(times)


if __name__ == "__main__":
    sys.exit(main())
