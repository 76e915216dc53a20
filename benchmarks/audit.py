"""How long the task audit takes, side by side: the demo suite and a suite mined from a real
repository. Asserts nothing.

    python benchmarks/audit.py [--jobs 2] [--repo CLONE [--since DATE] [--max N]] [--mined SUITE]

The audit is what ``check --audit`` runs: the self-test (reference, untouched, noop, fixtures,
a mined task's rewritten reference), then the exploit library, on ``--jobs`` workers. Each
suite is copied to a temporary folder first, so its audit records land there. ``--repo`` mines
a clone with ``mine --validate`` (its own time is printed apart, not counted) and audits the
suite it writes; ``--mined`` audits a suite mined before instead. Prints, for each suite, the
wall time of each part, the time per 10 tasks beside the goal (under 120 s), the CPU time the
work took (the machine is shared: the load average is printed too), and each task's trust
with the reasons for every task that is not trusted.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from harnessdrive.audit.record import TaskAudit
from harnessdrive.audit.runner import audit
from harnessdrive.checking.suite import self_test
from harnessdrive.demo import DEMO_SUITE
from harnessdrive.mining.mine import MineOptions, mine
from harnessdrive.tasks.loading import load_suite

GOAL_PER_10_TASKS = 120.0


@dataclass
class Timed:
    name: str
    tasks: int = 0
    self_test: float = 0.0
    exploits: float = 0.0
    cpu: float = 0.0
    audits: list[TaskAudit] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return self.self_test + self.exploits

    def per_10(self, seconds: float) -> float:
        return seconds / max(self.tasks, 1) * 10


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def audit_suite(name: str, folder: Path, tmp: Path, jobs: int) -> Timed:
    copy = tmp / name / "suite"
    shutil.copytree(folder, copy, symlinks=True)
    suite = load_suite(copy)
    timed = Timed(name, tasks=len(suite.tasks))
    cpu = _children_cpu()
    started = time.monotonic()
    checks = self_test(suite, logs=tmp / name / "check", jobs=jobs)
    timed.self_test = time.monotonic() - started
    started = time.monotonic()
    timed.audits = audit(suite, logs=tmp / name / "audit", jobs=jobs, checks=checks)
    timed.exploits = time.monotonic() - started
    timed.cpu = _children_cpu() - cpu
    return timed


def mine_suite(repo: Path, tmp: Path, args: argparse.Namespace) -> tuple[Path, float]:
    options = MineOptions(
        repo=repo,
        since=args.since,
        max_tasks=args.max,
        validate=True,
        jobs=args.jobs,
        output=tmp / "mined",
    )
    started = time.monotonic()
    result = mine(options, sandbox="auto", python=sys.executable)
    if result.suite is None:
        raise SystemExit(f"mining {repo} wrote no suite")
    return result.suite, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--suite", type=Path, default=DEMO_SUITE, help="instead of the demo's")
    parser.add_argument("--repo", type=Path, help="a clone to mine with mine --validate")
    parser.add_argument("--since", default="2019-01-01")
    parser.add_argument("--max", type=int, default=10)
    parser.add_argument("--mined", type=Path, help="a suite mined before, instead of --repo")
    args = parser.parse_args()
    results: list[Timed] = []
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="audit-bench-") as scratch:
        tmp = Path(scratch)
        mined, mining = args.mined, None
        if args.repo is not None and mined is None:
            mined, mining = mine_suite(args.repo.resolve(), tmp, args)
        results.append(audit_suite(args.suite.name, args.suite, tmp, args.jobs))
        if mined is not None:
            label = f"mined from {args.repo.name}" if args.repo else f"mined {mined.name}"
            results.append(audit_suite(label.replace(" ", "-"), mined, tmp, args.jobs))
    _print(results, args.jobs, load, mining)


def _print(results: list[Timed], jobs: int, load: float, mining: float | None) -> None:
    print(
        f"check --audit on {jobs} workers; load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end ({os.cpu_count()} cores)"
    )
    if mining is not None:
        print(f"mining took {mining:.0f} s (not counted below)")
    header = (
        f"{'suite':28} {'tasks':>5} {'self-test':>10} {'exploits':>9} {'total':>8} "
        f"{'per 10 tasks':>13} {'CPU per 10':>11}  goal < {GOAL_PER_10_TASKS:.0f} s  trusted"
    )
    print(header)
    for item in results:
        per_10 = item.per_10(item.seconds)
        trusted = sum(audit.trusted for audit in item.audits)
        print(
            f"{item.name:28} {item.tasks:5d} {item.self_test:9.1f}s {item.exploits:8.1f}s "
            f"{item.seconds:7.1f}s {per_10:12.1f}s {item.per_10(item.cpu):10.1f}s  "
            f"{'within' if per_10 < GOAL_PER_10_TASKS else 'OVER':>13}  "
            f"{trusted} of {item.tasks}"
        )
    for item in results:
        print(f"\n{item.name}:")
        for found in item.audits:
            exploits = len(found.exploits)
            print(f"  {found.task}: {found.trust_word} ({exploits} exploits)")
            for exploit in found.broken_by:
                print(f"    exploit {exploit.exploit} got a pass; fix: {exploit.fix}")
            for problem in found.problems:
                print(f"    {problem}")


if __name__ == "__main__":
    main()
