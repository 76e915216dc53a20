"""How long the demo project's own tests take. Prints times; asserts nothing.

    python benchmarks/demo_project.py [--runs 5]

The demo suite's project stays tiny so that a demo trial's time is the agent's, not its tests'.
Runs the project's whole test folder with this interpreter in a fresh copy (plain pytest, no
plugins, no bytecode written) and prints the test time pytest reports in its junit report
(interpreter start-up left out) and the wall time of the whole command.

Target: under 2 s of test time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import harnessdrive

PROJECT = Path(harnessdrive.__file__).parent / "demo" / "suite" / "project"


def one_run(root: Path) -> tuple[float, float]:
    """(test seconds from junit, wall seconds) of one run of the project's tests."""
    copy = root / "project"
    shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    report = root / "junit.xml"
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env |= {"PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "tests", f"--junitxml={report}"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if not report.exists():
        raise SystemExit(f"no junit report:\n{done.stdout}{done.stderr}")
    suites = ET.parse(report).getroot().iter("testsuite")
    return sum(float(suite.get("time", "0")) for suite in suites), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tests, walls = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="harnessdrive-bench-") as scratch:
            test_seconds, wall = one_run(Path(scratch))
        tests.append(test_seconds)
        walls.append(wall)
    print(
        f"demo project tests, {args.runs} runs: test time median {statistics.median(tests):.2f} s"
        f" (worst {max(tests):.2f} s), whole command median {statistics.median(walls):.2f} s"
    )
    print("target: under 2 s of test time")


if __name__ == "__main__":
    main()
