"""What the sandbox adds to each process start. Prints times and ratios; asserts nothing.

    python benchmarks/sandbox.py [--runs 40] [--trials 20]

First whole trials (a one-line agent, a one-line grading command) under ``none`` and ``bwrap``:
the median trial time, the part outside the agent and test commands (our own machinery) and
the part inside them (where the sandbox's start-up cost lands). Then ``/bin/true`` and a
``python -c pass`` through :func:`run_process` directly, through the ``none`` back-end (process
group, limits, watchdog, tree kill) and through ``bwrap`` (namespaces, the read-only view, fresh
/tmp): the median milliseconds per start and the extra milliseconds against the direct start,
and the same under ``loopback`` networking (which adds the relay process).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harnessdrive.sandbox.env import base_environment
from harnessdrive.sandbox.process import run_process
from harnessdrive.sandbox.runner import Isolation, get_sandbox


def median_ms(action: Callable[[], object], runs: int) -> float:
    action()  # warm the caches (the bwrap probe, the view) once
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    per_trial(args.trials)
    with tempfile.TemporaryDirectory(prefix="harnessdrive-bench-") as text:
        root = Path(text)
        work, home, tmp = root / "work", root / "home", root / "tmp"
        for folder in (work, home, tmp):
            folder.mkdir()
        env = base_environment(home, tmp)
        out = root / "out.log"
        isolation = Isolation(writable=(work, home, tmp))
        plain = get_sandbox("none")
        try:
            bwrap = get_sandbox("bwrap")
        except Exception as exc:
            print(f"bwrap unavailable: {exc}")
            return
        commands = {"true": ["/bin/true"], "python": [sys.executable, "-c", "pass"]}
        print(
            f"\n{'command':8} {'direct':>9} {'none':>9} {'bwrap':>9} {'loopback':>9}  bwrap extra"
        )
        for label, argv in commands.items():

            def direct(argv: list[str] = argv) -> object:
                return run_process(argv, cwd=work, env=env, timeout=30, stdout=out, stderr=out)

            def sandboxed(sandbox: object, network: str, argv: list[str] = argv) -> object:
                iso = Isolation(writable=isolation.writable, network=network, ports=(9,))  # type: ignore[arg-type]
                return sandbox.run(  # type: ignore[attr-defined]
                    argv, cwd=work, env=env, timeout=30, stdout=out, stderr=out, isolation=iso
                )

            base = median_ms(direct, args.runs)
            none = median_ms(lambda: sandboxed(plain, "none"), args.runs)
            bw = median_ms(lambda: sandboxed(bwrap, "none"), args.runs)
            loop = median_ms(lambda: sandboxed(bwrap, "loopback"), max(args.runs // 4, 5))
            print(
                f"{label:8} {base:8.1f}ms {none:8.1f}ms {bw:8.1f}ms {loop:8.1f}ms"
                f"  +{bw - base:.1f}ms ({bw / base:.2f}x)"
            )


def per_trial(trials: int) -> None:
    """Whole trials of a one-line agent graded by a one-line command, under each back-end."""
    from harnessdrive.cli.variants import resolve_variants
    from harnessdrive.running.plan import make_plan
    from harnessdrive.running.run import RunOptions, execute
    from harnessdrive.tasks.loading import load_suite
    from harnessdrive.testing.suites import TaskFiles, write_suite

    with tempfile.TemporaryDirectory(prefix="harnessdrive-bench-") as text:
        root = Path(text)
        task = TaskFiles("t", files={"a.txt": "a\n"}, command="test -f b.txt")
        suite = load_suite(write_suite(root, [task]))
        variants = resolve_variants(suite, [], commands=["touch=touch b.txt"], models=[])
        print(f"{'sandbox':8} {'trial':>9} {'outside':>9} {'inside':>9}  (medians of {trials})")
        for kind in ("none", "bwrap"):
            plan = make_plan(suite, variants, trials)
            summary = execute(plan, RunOptions(results=root / f"results-{kind}", sandbox=kind))
            timings = [r.seconds for r in summary.trials]
            total = statistics.median(t.total for t in timings) * 1000
            overhead = statistics.median(t.overhead for t in timings) * 1000
            commands = statistics.median(t.total - t.overhead for t in timings) * 1000
            print(f"{kind:8} {total:8.1f}ms {overhead:8.1f}ms {commands:8.1f}ms")


if __name__ == "__main__":
    main()
