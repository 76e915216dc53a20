"""How long the task audit takes: the exploit library on the demo suite. Asserts nothing.

    python benchmarks/audit.py [--jobs 2] [--suite PATH]

Copies the suite (the demo's by default) to a temporary folder, so its audit records land there,
and audits every task once on ``--jobs`` workers. Prints the wall time, the exploits run, the time
per 10 tasks beside the goal (under 120 s per 10 tasks), and each task's trust with the exploits
that got a pass.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from harnessdrive.audit.runner import audit
from harnessdrive.demo import DEMO_SUITE
from harnessdrive.tasks.loading import load_suite

GOAL_PER_10_TASKS = 120.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--suite", type=Path, default=DEMO_SUITE)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="audit-bench-") as tmp:
        copy = Path(tmp) / "suite"
        shutil.copytree(args.suite, copy)
        suite = load_suite(copy)
        started = time.monotonic()
        found = audit(suite, logs=Path(tmp) / "logs", jobs=args.jobs)
        seconds = time.monotonic() - started
    exploits = sum(len(item.exploits) for item in found)
    per_10 = seconds / max(len(found), 1) * 10
    print(
        f"audit of {suite.name}: {len(found)} tasks, {exploits} exploits, {seconds:.1f} s on "
        f"{args.jobs} workers; {per_10:.1f} s per 10 tasks (goal < {GOAL_PER_10_TASKS:.0f} s): "
        f"{'within' if per_10 < GOAL_PER_10_TASKS else 'OVER'} the goal"
    )
    for item in found:
        broken = ", ".join(e.exploit for e in item.broken_by) or "-"
        trust = item.trust_word
        print(f"  {item.task}: {trust}; broken by: {broken}")
        for problem in item.problems:
            print(f"    {problem}")


if __name__ == "__main__":
    main()
