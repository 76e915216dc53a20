"""How long a fork bomb lives in a sandbox with a process limit. Prints times; asserts nothing.

    python benchmarks/fork_bomb.py [--runs 5] [--busy 2] [--sandbox bwrap]

Each run starts ``:(){ :|:& };:`` under a 64-process limit and times it from start until every
process of it is gone, while ``--busy`` CPU-bound processes compete for the cores (as other
trials would). Prints the limit each run recorded and the median and worst seconds.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.limits import Limits
from harnessdrive.sandbox.runner import Isolation, get_sandbox

FORK_BOMB = ":(){ :|:& };:; sleep 30"


def one_run(kind: str, root: Path) -> tuple[str | None, float]:
    workspace, home, tmp = root / "work", root / "home", root / "tmp"
    for folder in (workspace, home, tmp):
        folder.mkdir(parents=True)
    sandbox = get_sandbox(kind).with_limits(Limits(processes=64))
    started = time.perf_counter()
    result = sandbox.run(
        ["bash", "-c", FORK_BOMB],
        cwd=workspace,
        env=base_environment(home, tmp),
        timeout=60,
        stdout=root / "out",
        stderr=root / "err",
        isolation=Isolation(writable=(workspace, home, tmp)),
    )
    return result.limit, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--busy", type=int, default=2, help="CPU-bound processes beside it")
    parser.add_argument("--sandbox", default="bwrap", choices=("bwrap", "none"))
    args = parser.parse_args()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        seconds = []
        for number in range(args.runs):
            with tempfile.TemporaryDirectory() as scratch:
                limit, took = one_run(args.sandbox, Path(scratch))
            seconds.append(took)
            print(f"run {number + 1}: stopped by {limit or 'nothing'} after {took:.2f} s")
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    print(
        f"{args.sandbox}, {args.busy} busy processes: median {statistics.median(seconds):.2f} s, "
        f"worst {max(seconds):.2f} s"
    )


if __name__ == "__main__":
    main()
