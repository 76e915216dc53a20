"""How long the task audit takes, side by side: the demo suite and a suite mined from a real
repository. Asserts nothing.

    python benchmarks/audit.py [--jobs 2] [--repo CLONE [--since DATE] [--max N]] [--mined SUITE]

The audit is what ``--audit`` adds to ``check``: ``check --audit`` runs the self-test
(reference, untouched, noop, fixtures, a mined task's rewritten reference) and the exploit
library on one executor of ``--jobs`` workers, and ``check`` alone runs in the same run on
another fresh copy of the suite, so the difference is the audit's own cost. Each suite is
copied to a temporary folder first, so its records land there.
``--repo`` mines a clone with ``mine --validate`` (its own time is printed apart, not counted)
and audits the suite it writes; ``--mined`` audits a suite mined before instead. Prints, for
each suite, the jobs run, both wall times, the audit's time per 10 tasks beside the goal (under
120 s) and that of the whole ``check --audit``, the load average (the machine may be shared),
how the rewritten references fared, and each task's trust with the reasons for every task that
is not trusted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from harnessdrive.audit.record import TaskAudit
from harnessdrive.audit.runner import check_and_audit
from harnessdrive.checking.cases import TaskCheck
from harnessdrive.checking.mined import REWRITTEN
from harnessdrive.checking.suite import self_test
from harnessdrive.demo import DEMO_SUITE
from harnessdrive.mining.mine import MineOptions, mine
from harnessdrive.tasks.loading import load_suite

GOAL_PER_10_TASKS = 120.0


@dataclass
class Timed:
    name: str
    tasks: int = 0
    check_only: float = 0.0
    """``check`` without ``--audit``."""
    seconds: float = 0.0
    """``check --audit``."""
    audits: list[TaskAudit] = field(default_factory=list)
    checks: list[TaskCheck] = field(default_factory=list)

    def per_10(self, seconds: float) -> float:
        return seconds / max(self.tasks, 1) * 10


def audit_suite(name: str, folder: Path, tmp: Path, jobs: int, label: str = "") -> Timed:
    """``check`` alone, then ``check --audit``, each on a fresh copy of the suite."""
    copies = [tmp / name / f"suite-{n}" for n in (1, 2)]
    for copy in copies:
        shutil.copytree(folder, copy, symlinks=True)
    alone = load_suite(copies[0])
    started = time.monotonic()
    self_test(alone, logs=tmp / name / "check-logs", jobs=jobs)
    check_only = time.monotonic() - started
    suite = load_suite(copies[1])
    timed = Timed(label or suite.name, tasks=len(suite.tasks), check_only=check_only)
    started = time.monotonic()
    timed.checks, timed.audits = check_and_audit(suite, logs=tmp / name / "logs", jobs=jobs)
    timed.seconds = time.monotonic() - started
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
        results.append(audit_suite("given", args.suite, tmp, args.jobs))
        if mined is not None:
            label = f"mined from {args.repo.name}" if args.repo else f"mined: {mined.name}"
            results.append(audit_suite("mined", mined, tmp, args.jobs, label))
    _print(results, args.jobs, load, mining)


def _print(results: list[Timed], jobs: int, load: float, mining: float | None) -> None:
    print(
        f"check --audit on {jobs} workers; load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end ({os.cpu_count()} cores)"
    )
    if mining is not None:
        print(f"mining took {mining:.0f} s (not counted below)")
    print(
        f"{'suite':26} {'tasks':>5} {'cases':>6} {'exploits':>9} {'check':>7} "
        f"{'--audit':>8} {'audit per 10 tasks':>19} {'goal < 120 s':>12} "
        f"{'check --audit per 10':>21}  trusted"
    )
    for item in results:
        added = item.per_10(item.seconds - item.check_only)
        cases = sum(len(check.cases) for check in item.checks)
        exploits = sum(len(audit.exploits) for audit in item.audits)
        trusted = sum(audit.trusted for audit in item.audits)
        print(
            f"{item.name:26} {item.tasks:5d} {cases:6d} {exploits:9d} {item.check_only:6.1f}s "
            f"{item.seconds:7.1f}s {added:18.1f}s "
            f"{'within' if added < GOAL_PER_10_TASKS else 'OVER':>12} "
            f"{item.per_10(item.seconds):20.1f}s  {trusted} of {item.tasks}"
        )
    print(
        "audit per 10 tasks: what --audit adds to check (check --audit minus check, both on "
        "fresh copies in this run), per 10 tasks"
    )
    for item in results:
        print(f"\n{item.name}:")
        rewritten = [c.outcome for check in item.checks for c in check.cases if c.name == REWRITTEN]
        skipped = [n for check in item.checks for n in check.notes if "no rewritten" in n]
        if rewritten or skipped:
            passed = rewritten.count("pass")
            print(
                f"  rewritten (declared or generated): graded on {len(rewritten)} tasks, "
                f"{passed} passed; not rewritten on {len(skipped)}"
            )
        for found in item.audits:
            exploits = len(found.exploits)
            print(f"  {found.task}: {found.trust_word} ({exploits} exploits)")
            for exploit in found.broken_by:
                print(f"    exploit {exploit.exploit} got {exploit.got}; fix: {exploit.fix}")
            for problem in found.problems:
                print(f"    {problem}")
        for check in item.checks:
            for note in check.notes:
                if "no rewritten" in note:
                    print(f"  {check.task}: {note}")


if __name__ == "__main__":
    main()
