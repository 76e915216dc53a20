"""The pytest plugin's costs: a 100-cell ``--dry-run`` and an ordinary test run. Asserts nothing.

    python benchmarks/pytest_plugin.py [--cells-per-entry 10] [--rounds 3]

Writes a project whose one eval case sweeps 5 priced matrix entries × (control + a treatment) ×
``--cells-per-entry`` repeats (100 cells by default) and runs ``pytest --dry-run`` on it in a
fresh interpreter, ``--rounds`` times. Prints pytest's own session time (what it reports after
"in") and its CPU time, the time the forecasts took inside the session, and the time a fresh
interpreter needs to import the plugin (harnessdrive), which the session time includes. Then
runs a one-test
project with the plugin installed and with ``-p no:harnessdrive``, to show what the entry point
costs an ordinary run. The goal: a 100-cell forecast in under 1 s of pytest time.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MATRIX = [
    "claude/claude-sonnet-4-5",
    "claude/claude-sonnet-4-5/high",
    "claude/claude-haiku-4-5/min",
    "codex/gpt-5.5/max",
    "codex/gpt-5.5/mid",
]


def write_project(root: Path, repeat: int) -> None:
    evals = root / "evals"
    (evals / "fixtures" / "start").mkdir(parents=True)
    (evals / "fixtures" / "start" / "README.md").write_text("start\n")
    (evals / "treatments" / "terse").mkdir(parents=True)
    for name in ("AGENTS.md", "CLAUDE.md"):
        (evals / "treatments" / "terse" / name).write_text("Be terse.\n")
    (evals / "eval_sweep.py").write_text(
        "import harnessdrive\n\n"
        f"@harnessdrive.evalcase('tidy up', fixture='start', models={MATRIX!r},\n"
        f"                       treatments=['terse'], repeat={repeat})\n"
        "def eval_tidy(output):\n    pass\n"
    )
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (root / "test_plain.py").write_text("def test_ok():\n    assert True\n")
    # The session's CPU time beside its wall time: on a loaded machine the wall time says more
    # about the neighbours than about the plugin.
    (root / "conftest.py").write_text(
        "import time\n_started = []\n\n"
        "def pytest_sessionstart(session):\n    _started.append(time.process_time())\n\n"
        "def pytest_unconfigure(config):\n"
        "    print(f'session cpu {time.process_time() - _started[0]:.3f}s')\n"
    )


def pytest_seconds(root: Path, *args: str) -> tuple[float, str]:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    # pytest's last line: "100 tests collected in 0.52s", "1 passed in 0.02s"
    found = re.findall(r"\d+ \w+(?: collected)?(?:, \d+ \w+)* in ([0-9.]+)s", done.stdout)
    if not found:
        raise SystemExit(f"no session time in the output:\n{done.stdout}\n{done.stderr}")
    return float(found[-1]), done.stdout


def import_seconds() -> float:
    probe = (
        "import time; t = time.perf_counter(); "
        "import harnessdrive.pytest_plugin, harnessdrive.pytest_plugin.hooks; "
        "print(time.perf_counter() - t)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells-per-entry", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hd-pytest-bench-") as scratch:
        root = Path(scratch)
        write_project(root, options.cells_per_entry)
        sessions, cpus, forecasts, imports = [], [], [], []
        for _ in range(options.rounds):
            seconds, out = pytest_seconds(root, "evals", "--dry-run", "-q")
            sessions.append(seconds)
            cpu = re.search(r"session cpu ([0-9.]+)s", out)
            assert cpu is not None, out
            cpus.append(float(cpu.group(1)))
            found = re.search(r"forecast computed in ([0-9.]+)s for (\d+) cell", out)
            assert found is not None, out
            forecasts.append(float(found.group(1)))
            cells = int(found.group(2))
            imports.append(import_seconds())
        plain = [pytest_seconds(root, "test_plain.py", "-q")[0] for _ in range(options.rounds)]
        bare = [
            pytest_seconds(root, "test_plain.py", "-q", "-p", "no:harnessdrive")[0]
            for _ in range(options.rounds)
        ]
    median = _median
    print(f"dry run of {cells} cells, median of {options.rounds} (goal: under 1 s of pytest time)")
    print(f"  pytest session time          {median(sessions):7.3f} s")
    print(f"  session CPU time             {median(cpus):7.3f} s")
    print(f"  of which the forecasts       {median(forecasts):7.3f} s")
    print(f"  importing harnessdrive       {median(imports):7.3f} s (fresh interpreter)")
    print(f"  session time less the import {median(sessions) - median(imports):7.3f} s")
    print("ordinary one-test run")
    print(f"  with the plugin installed    {median(plain):7.3f} s")
    print(f"  with -p no:harnessdrive      {median(bare):7.3f} s")
    print(f"  ratio                        {median(plain) / max(median(bare), 1e-9):7.2f}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"(measured {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, load {load}, ")
    print(f" {os.cpu_count()} CPUs)")
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        # Then every interpreter compiles each module it imports from source, every time.
        print("PYTHONDONTWRITEBYTECODE is set: no bytecode is cached, so every session above")
        print("compiled its imports from source; unset it to measure what a usual install does")


def _median(values: list[float]) -> float:
    # Not statistics.median: benchmarks/statistics.py shadows the standard module when this
    # script runs from its folder.
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


if __name__ == "__main__":
    main()
