"""Time per trial spent outside the agent and the test commands, next to the bare test command.

    python benchmarks/trial_overhead.py [--tasks 20] [--command 'true']

Builds a suite of small tasks (a few source files each, a fast test command), runs the built-in
``reference`` agent on every task through the real run driver, and prints:

- the bare test-command time (the same command started directly, best of several runs);
- the time to build the project's base snapshot once (shared by every trial);
- harnessdrive's overhead per trial: wall time of the whole run divided by trials, minus the
  agent's and the grading commands' own time (as each result.json records them);
- their ratio, and the per-phase overhead recorded in result.json.

Target: overhead under 50 ms per trial.
"""

from __future__ import annotations

import argparse
import json
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--command", default="true", help="the test command of every task")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hd-bench-") as tmp:
        root = Path(tmp)
        suite = load_suite(build_suite(root, args.tasks, args.command))
        bare = bare_command_seconds(args.command, root)
        plan = make_plan(suite, (VariantSpec(harness="reference"),), 1)
        started = time.perf_counter()
        summary = execute(plan, RunOptions(results=root / "results", sandbox="none"))
        wall = time.perf_counter() - started
        trials = summary.trials
        assert all(r.outcome == "pass" for r in trials), [r.outcome for r in trials]
        inner = sum(
            r.seconds.agent
            + sum(run.seconds for run in (r.grading.visible, r.grading.hidden) if run is not None)
            for r in trials
            if r.grading is not None
        )
        per_trial = (wall - inner) / len(trials)
        recorded = [r.seconds.overhead for r in trials]
        data = json.loads((root / "results" / "runs" / f"{summary.run_id}.json").read_text())
    print(f"trials: {len(data['trials'])} (one at a time), test command: {args.command!r}")
    print(f"bare test command:                  {bare * 1000:7.1f} ms")
    print(f"agent + grading commands per trial: {inner / len(trials) * 1000:7.1f} ms")
    print(
        f"overhead per trial, whole run:      {per_trial * 1000:7.1f} ms  (lock, snapshot, index)"
    )
    median = statistics.median(recorded)
    print(f"overhead per trial, in result.json: {median * 1000:7.1f} ms  (median)")
    print(f"ratio overhead / bare test command: {per_trial / bare:7.1f}x")
    print("target: overhead under 50 ms per trial")


if __name__ == "__main__":
    sys.exit(main())
