"""How fast a stop takes effect: deadlines, limits and stop signals. Prints times; asserts nothing.

    python benchmarks/stopping.py [--runs 3] [--sandbox none --sandbox bwrap] [--skip-signals]

The tests check that each of these stops happens; this measures how soon, per back-end:

- deadline: a tree (a child, a ``setsid`` daemon, the main process) with a 1 s deadline; the
  seconds past the deadline until the command returned with every process of it gone;
- disk, memory, processes: a disk filler, four processes that together hold too much memory,
  a spawner; the seconds until its limit stopped it;
- agent timeout: the built-in ``sleeper`` agent under a 1.5 s agent timeout; the seconds its
  trial's agent phase ran past that timeout;
- SIGINT, SIGTERM: ``harnessdrive run`` with an agent at work; the seconds from the signal to
  the driver's exit (130, the trial recorded ``interrupted``).

Goal: well inside what the tests once asserted: 10 s past a deadline or a stop signal, 20 s
until a limit stops its tree (the memory hog needs a moment to allocate its 400 MiB).
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path

import psutil

from harnessdrive.cli.variants import resolve_variants
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.limits import Limits, MiB
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.sandbox.runner import Isolation, SandboxKind, get_sandbox
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import TaskFiles, write_suite

DEADLINE = 1.0
AGENT_TIMEOUT = 1.5
HOG = "python3 -c 'b = bytearray(100 * 1024 * 1024); import time; time.sleep(30)'"


def tree(token: str) -> str:
    return (
        f"(setsid bash -c 'exec -a {token}-daemon sleep 300' &); "
        f"bash -c 'exec -a {token}-child sleep 300' & "
        f"exec -a {token}-main sleep 300"
    )


# The limit's name: the limits and the script that breaks them.
LIMITED = {
    "disk": (
        Limits(file_size=4 * MiB, disk=16 * MiB),
        "for i in $(seq 50); do head -c 3M /dev/zero > f$i; sleep 0.05; done; sleep 30",
    ),
    "memory": (Limits(memory=160 * MiB), f"for i in 1 2 3 4; do {HOG} & done; wait"),
    "processes": (Limits(processes=20), "for i in $(seq 200); do sleep 30 & done; wait"),
}


def alive_with(token: str) -> bool:
    for proc in psutil.process_iter(["cmdline"]):
        if token in " ".join(proc.info["cmdline"] or []):
            return True
    return False


def run_script(
    kind: SandboxKind, root: Path, script: str, limits: Limits, timeout: float
) -> ProcessResult:
    work, home, tmp = root / "work", root / "home", root / "tmp"
    for folder in (work, home, tmp):
        folder.mkdir(parents=True)
    return get_sandbox(kind, limits=limits).run(
        ["bash", "-c", script],
        cwd=work,
        env=base_environment(home, tmp),
        timeout=timeout,
        stdout=root / "out",
        stderr=root / "err",
        isolation=Isolation(writable=(work, home, tmp)),
    )


def deadline_lag(kind: SandboxKind, root: Path) -> float:
    """Seconds past the deadline until the command returned and its whole tree was gone."""
    token = f"hd-bench-{uuid.uuid4().hex[:10]}"
    started = time.perf_counter()
    result = run_script(kind, root, tree(token), Limits(), DEADLINE)
    while alive_with(token):
        time.sleep(0.01)
    took = time.perf_counter() - started
    if not result.timed_out:
        raise SystemExit(f"deadline under {kind}: not timed out ({result})")
    return took - DEADLINE


def limit_seconds(name: str, kind: SandboxKind, root: Path) -> float:
    limits, script = LIMITED[name]
    started = time.perf_counter()
    result = run_script(kind, root, script, limits, 60)
    took = time.perf_counter() - started
    if result.limit != name:
        raise SystemExit(f"{name} under {kind}: stopped by {result.limit or 'nothing'}")
    return took


def sleeper_lag(kind: SandboxKind, root: Path) -> float:
    """Seconds the sleeper's agent phase ran past its timeout."""
    task = TaskFiles("t", files={"a.txt": "a\n"}, command="true")
    suite = load_suite(write_suite(root, [task]))
    plan = make_plan(suite, resolve_variants(suite, ["sleeper"]), 1)
    options = RunOptions(results=root / "results", sandbox=kind, agent_timeout=AGENT_TIMEOUT)
    (trial,) = execute(plan, options).trials
    if trial.status != "timeout":
        raise SystemExit(f"sleeper under {kind}: {trial.status}")
    return trial.seconds.agent - AGENT_TIMEOUT


def signal_seconds(sig: signal.Signals, kind: SandboxKind, root: Path) -> float:
    """Seconds from the signal, sent while the agent is at work, to the driver's exit."""
    task = TaskFiles("t", files={"a.txt": "a\n"}, command="true")
    suite = write_suite(root, [task])
    results = root / "results"
    command = [
        sys.executable, "-m", "harnessdrive.cli", "run", str(suite), "--cmd", "slow=sleep 30",
        "--sandbox", kind, "--results", str(results),
    ]  # fmt: skip
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        driver_process = psutil.Process(driver.pid)
        give_up = time.monotonic() + 120
        while not any(p.cmdline() == ["sleep", "30"] for p in _children(driver_process)):
            if driver.poll() is not None or time.monotonic() > give_up:
                raise SystemExit(f"{sig.name} under {kind}: the agent never started")
            time.sleep(0.01)
        sent = time.perf_counter()
        driver.send_signal(sig)
        driver.wait(timeout=120)
        took = time.perf_counter() - sent
    finally:
        if driver.poll() is None:
            driver.kill()
        driver.communicate()
    recorded = json.loads((results / "trials/suite/t/slow/r1/result.json").read_text())
    if driver.returncode != 130 or recorded["status"] != "interrupted":
        raise SystemExit(f"{sig.name} under {kind}: exit {driver.returncode}, {recorded['status']}")
    return took


def _children(process: psutil.Process) -> list[psutil.Process]:
    found = []
    for child in process.children(recursive=True):
        try:
            child.cmdline()
        except psutil.NoSuchProcess:
            continue
        found.append(child)
    return found


def measure(label: str, runs: int, once: Callable[[Path], float]) -> None:
    samples = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="harnessdrive-bench-") as scratch:
            samples.append(once(Path(scratch)))
    print(
        f"{label:32} median {statistics.median(samples):6.2f} s   worst {max(samples):6.2f} s"
        f"   ({runs} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sandbox", action="append", choices=("none", "bwrap"))
    parser.add_argument("--skip-signals", action="store_true", help="no harnessdrive run")
    args = parser.parse_args()
    kinds: list[SandboxKind] = args.sandbox or ["none", "bwrap"]
    for kind in kinds:
        try:
            get_sandbox(kind)
        except Exception as exc:
            print(f"{kind}: unavailable: {exc}")
            continue
        print(f"-- {kind}")
        runs = args.runs
        measure(f"deadline {DEADLINE:g} s, past it", runs, partial(deadline_lag, kind))
        for name in LIMITED:
            measure(f"{name} limit, until stopped", runs, partial(limit_seconds, name, kind))
        measure(f"agent timeout {AGENT_TIMEOUT:g} s, past it", runs, partial(sleeper_lag, kind))
        if not args.skip_signals:
            for sig in (signal.SIGINT, signal.SIGTERM):
                measure(f"{sig.name} to exit", runs, partial(signal_seconds, sig, kind))


if __name__ == "__main__":
    main()
