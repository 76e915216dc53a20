"""harnessdrive next to Harness Lab 0.3.0 on Harness Lab's own demo suite, alternating.

    python benchmarks/peer_overhead.py [--rounds 2] [--repeat 5] [--pairs 20] [--python312 PATH]
                                       [--harnesslab-venv DIR] [--profile]
                                       [--mine REPO [--mine-commits 100] [--mine-repeats 1]]

1. Installs Harness Lab 0.3.0 from PyPI into a scratch virtual environment (it needs Python
   3.12: found with ``pyenv`` or on PATH, or named with ``--python312``). ``--harnesslab-venv``
   reuses an environment that already has it.
2. Ports the three tasks of its bundled ``demo`` suite to task.toml form, at benchmark time,
   from the installed files: the same prompt, fixture repository, visible and hidden unittest
   commands, injected hidden tests, protected ``tests/`` and reference overlay. Nothing of
   Harness Lab is kept in this repository.
3. Runs ``reference`` and ``noop`` x ``--repeat`` on every task (30 sequential trials by
   default) with each tool, alternating: Harness Lab, harnessdrive ``--sandbox none``,
   harnessdrive under bubblewrap, ``--rounds`` times. Each is a fresh CLI process with a fresh
   results folder, timed from start to exit.
4. Prints every time, the medians and the ratios (target: harnessdrive at most 0.5x Harness
   Lab's time with ``--sandbox none``, at most 0.6x under bubblewrap) and the per-trial phases
   result.json records.
5. Times each Python test command inside harnessdrive (what result.json records, a reference
   trial of the task under each sandbox) next to the same command run bare in a prepared copy,
   ``--pairs`` times, in matched pairs (:class:`CommandPairs`); target within 1.1x.
   harnessdrive runs a task's visible and hidden commands side by side at the lowest CPU
   priority, so the bare commands are timed that way ("paired", the target's measure), and
   also one at a time at normal priority ("alone"). Each command's ratio is the median over
   the pairs of each pair's own ratio, so the machine's drift between pairs cancels. A second
   bare paired run of each pair shows how far bare differs from itself on this machine (the
   noise the ratios carry).
6. With ``--mine REPO``, both tools then mine the repository's newest commits with the same
   test command, 2 jobs each (:func:`mining_peer.compare_mining`; ``REPO`` is a clone that
   neither tool changes).

Every tool runs as in a user's activated environment: this interpreter's folder first on PATH
(so ``python`` in the commands is this interpreter, not a version manager's shim) and without
``PYTHONDONTWRITEBYTECODE``.

``--profile`` also runs one harnessdrive round in this process under cProfile and prints the
functions that took longest.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w
from mining_peer import HARNESS_LAB, compare_mining, find_python312, make_venv

VARIANTS = {"reference": "fake-reference", "noop": "fake-noop"}

# Reads the installed demo suite with Harness Lab's own YAML reader; prints it as JSON.
_READ_DEMO = """
import json, pathlib, sys, yaml, harnesslab
demo = pathlib.Path(harnesslab.__file__).parent / "bundled" / "suites" / "demo"
suite = yaml.safe_load((demo / "suite.yaml").read_text())
tasks = [yaml.safe_load((demo / t).read_text()) for t in suite["tasks"]]
json.dump({"folder": str(demo), "tasks": tasks}, sys.stdout)
"""


def port_demo(venv: Path, root: Path) -> Path:
    """The demo's three tasks as a harnessdrive suite under ``root``."""
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", _READ_DEMO], capture_output=True, text=True, check=True
    )
    demo = json.loads(out.stdout)
    folder = Path(demo["folder"])
    suite = root / "port"
    project = suite / "project"
    shutil.copytree(folder / "fixture_repo", project, ignore=shutil.ignore_patterns("__pycache__"))
    names = []
    for spec in demo["tasks"]:
        verification = spec["verification"]
        task = suite / "tasks" / spec["id"]
        hidden = []
        for item in verification.get("inject", []):
            source = folder / "tasks" / item["source"]
            if not item["dest"].startswith("tests/"):
                continue  # the score script: only Harness Lab's score_command reads it
            target = task / "hidden" / item["source"].split("/", 1)[1]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            hidden.append({"source": target.relative_to(task).as_posix(), "target": item["dest"]})
        overlay = spec["reference_solution"]["overlay"]
        shutil.copytree(
            folder / "tasks" / overlay,
            task / "solution",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        data: dict[str, Any] = {
            "id": spec["id"],
            "title": spec["name"],
            "prompt": spec["prompt"],
            "repo": {"path": "../../project"},
            "grade": {
                "command": verification["command"],
                "visible_command": verification["visible_command"],
                "hidden": hidden,
                "protected": [p.rstrip("/") + "/**" for p in verification["protected_paths"]],
                "timeout": float(verification["timeout_seconds"]),
            },
        }
        (task / "task.toml").write_text(tomli_w.dumps(data), encoding="utf-8")
        names.append(spec["id"])
    (suite / "suite.toml").write_text(
        tomli_w.dumps({"name": "hl-demo", "tasks": [f"tasks/{n}" for n in names]})
    )
    return suite


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(
            f"{' '.join(argv[:3])} ... failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
        )
    return seconds


def run_harnesslab(venv: Path, work: Path, repeat: int) -> float:
    home = work / "hl-home"
    argv = [
        str(venv / "bin" / "harnesslab"), "--home", str(home), "run", "demo",
        "--variants", ",".join(VARIANTS.values()), "-r", str(repeat), "-p", "1", "-y",
    ]  # fmt: skip
    return timed(argv, work)


def harnessdrive_argv(suite: Path, results: Path, repeat: int, sandbox: str) -> list[str]:
    return [
        "run", str(suite), "--harness", ",".join(VARIANTS), "--repeat", str(repeat),
        "--jobs", "1", "--sandbox", sandbox, "--results", str(results), "--json",
    ]  # fmt: skip


def run_harnessdrive(suite: Path, results: Path, repeat: int, sandbox: str) -> float:
    argv = [
        sys.executable,
        "-m",
        "harnessdrive",
        *harnessdrive_argv(suite, results, repeat, sandbox),
    ]
    seconds = timed(argv, suite.parent)
    outcomes = {(r["variant_label"], r["outcome"]) for r in trial_results(results)}
    if outcomes != {("reference", "pass"), ("noop", "fail")}:
        sys.exit(f"harnessdrive ({sandbox}) graded wrongly: {sorted(outcomes)}")
    return seconds


def trial_results(results: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(results.glob("trials/**/result.json"))]


def _bare_argv(command: str, niced: bool) -> list[str]:
    return [*(["nice", "-n", "19"] if niced else []), "bash", "-c", command]


def side_by_side(commands: list[tuple[list[str], Path]]) -> list[float]:
    """Start every command at once; the seconds each took from the common start to its exit."""
    started = time.perf_counter()
    running = [
        subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for argv, cwd in commands
    ]
    seconds = [0.0] * len(running)

    def wait(index: int) -> None:
        running[index].wait()
        seconds[index] = time.perf_counter() - started

    waiters = [threading.Thread(target=wait, args=(i,)) for i in range(len(running))]
    for waiter in waiters:
        waiter.start()
    for waiter in waiters:
        waiter.join()
    return seconds


LABELS = ("visible", "hidden")


@dataclass
class CommandPairs:
    """Each Python test command inside harnessdrive and bare, measured in matched pairs: one
    reference trial of a task under each sandbox (a harnessdrive run of that task folder), then
    the task's two commands bare in prepared copies, started side by side at the lowest CPU
    priority as harnessdrive runs them ("paired"), and one at a time ("alone"), the order
    alternating. Neighbouring measurements see the same machine, so a shared machine's drift
    between minutes does not pass for a difference."""

    suite: Path
    work: Path
    times: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)

    def tasks(self) -> list[Path]:
        return sorted((self.suite / "tasks").iterdir())

    def prepare(self) -> None:
        for task in self.tasks():
            spec = tomllib.loads((task / "task.toml").read_text())
            for label in LABELS:
                copy = self.work / "bare" / task.name / label
                shutil.copytree(self.suite / "project", copy)
                shutil.copytree(task / "solution", copy, dirs_exist_ok=True)
                if label == "hidden":
                    for item in spec["grade"]["hidden"]:
                        shutil.copyfile(task / item["source"], copy / item["target"])
            self._bare(task)  # bytecode written, as after a user's first run
        self.times.clear()  # those first runs are no measurement

    def measure(self, pairs: int) -> None:
        for number in range(pairs):
            for task in self.tasks():
                if number % 2 == 0:
                    self._bare(task)
                self._inside(task, number)
                if number % 2 == 1:
                    self._bare(task)

    def _record(self, task: Path, label: str, mode: str, seconds: float) -> None:
        self.times.setdefault((task.name, label, mode), []).append(seconds)

    def _commands(self, task: Path) -> dict[str, str]:
        grade = tomllib.loads((task / "task.toml").read_text())["grade"]
        return {"visible": grade["visible_command"], "hidden": grade["command"]}

    def _bare(self, task: Path) -> None:
        commands = self._commands(task)
        copies = {label: self.work / "bare" / task.name / label for label in LABELS}
        pair = [(_bare_argv(commands[label], True), copies[label]) for label in LABELS]
        for mode in ("paired", "control"):  # the second: how far bare differs from itself
            for label, seconds in zip(LABELS, side_by_side(pair), strict=True):
                self._record(task, label, mode, seconds)
        for label in LABELS:
            alone = side_by_side([(_bare_argv(commands[label], False), copies[label])])[0]
            self._record(task, label, "alone", alone)

    def _inside(self, task: Path, number: int) -> None:
        for sandbox in ("none", "bwrap"):
            results = self.work / "pairs" / f"{task.name}-{sandbox}-{number}"
            argv = [
                sys.executable, "-m", "harnessdrive", "run", str(task), "--harness", "reference",
                "--sandbox", sandbox, "--results", str(results), "--json",
            ]  # fmt: skip
            timed(argv, self.work)
            (result,) = trial_results(results)
            if result["outcome"] != "pass":
                sys.exit(f"harnessdrive ({sandbox}) graded the reference on {task.name} wrongly")
            grading = result["rounds"][-1]["grading"]
            for label in LABELS:
                self._record(task, label, sandbox, grading[label]["seconds"])

    def ratio(self, task: Path, label: str, mode: str) -> float:
        """The median over the pairs of each pair's ratio to its own bare paired time: a pair's
        two measurements are seconds apart, so the machine's drift cancels."""
        bare = self.times[(task.name, label, "paired")]
        ours = self.times[(task.name, label, mode)]
        return statistics.median(o / b for o, b in zip(ours, bare, strict=True))

    def lines(self) -> list[str]:
        lines = [
            "\nPython test commands, inside harnessdrive vs bare, in matched pairs: median time,"
            " best in brackets, and the median of the pairs' ratios. harnessdrive runs a task's"
            " two commands side by side: 'paired' is bare the same way (target <= 1.10x),"
            " 'alone' one at a time at normal priority"
        ]
        ratios: dict[str, list[float]] = {"none": [], "bwrap": [], "control": []}
        for task in self.tasks():
            for label in LABELS:
                paired = self.times[(task.name, label, "paired")]
                alone = statistics.median(self.times[(task.name, label, "alone")])
                bare = statistics.median(paired)
                ratios["control"].append(self.ratio(task, label, "control"))
                for sandbox in ("none", "bwrap"):
                    inside = self.times[(task.name, label, sandbox)]
                    ours = statistics.median(inside)
                    ratio = self.ratio(task, label, sandbox)
                    ratios[sandbox].append(ratio)
                    lines.append(
                        f"  {task.name:30} {label:7} {sandbox:5} {ours * 1000:4.0f} ms"
                        f" ({min(inside) * 1000:3.0f}) vs paired {bare * 1000:4.0f} ms"
                        f" ({min(paired) * 1000:3.0f}): {ratio:.2f}x;"
                        f" alone {alone * 1000:4.0f} ms {ours / alone:.2f}x"
                    )
        for sandbox, values in ratios.items():
            what = "a second bare paired run (the noise)" if sandbox == "control" else sandbox
            lines.append(
                f"  {what}: every command {min(values):.2f}x to {max(values):.2f}x"
                f" (median {statistics.median(values):.2f}x) of its bare paired time"
            )
        worst = max(ratios["none"] + ratios["bwrap"])
        lines.append(
            f"  each command within 1.10x of its bare time: {'yes' if worst <= 1.10 else 'no'}"
            f" (worst {worst:.2f}x)"
        )
        return lines


def phases(results: list[Path]) -> None:
    rows = [r["seconds"] for folder in results for r in trial_results(folder)]
    print("\nPer-trial phases as result.json records them (median over every trial):")
    for key in ("agent", "grading", "overhead", "total"):
        values = [row.get(key) or 0.0 for row in rows]
        print(f"  {key:9} {statistics.median(values) * 1000:7.1f} ms")


def profile_once(suite: Path, work: Path, repeat: int) -> None:
    from harnessdrive.cli.app import run_cli

    results = work / "profile-results"
    profiler = cProfile.Profile()
    profiler.enable()
    run_cli(harnessdrive_argv(suite, results, repeat, "bwrap"))
    profiler.disable()
    print("\ncProfile of one harnessdrive round under bubblewrap (cumulative, top 25):")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--python312", help="a Python 3.12 interpreter for Harness Lab")
    parser.add_argument("--harnesslab-venv", type=Path, help="an environment that has it")
    parser.add_argument("--pairs", type=int, default=20, help="matched pairs per command")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--mine", type=Path, metavar="REPO", help="also compare mining REPO")
    parser.add_argument("--mine-commits", type=int, default=100)
    parser.add_argument("--mine-repeats", type=int, default=1)
    args = parser.parse_args()
    # Bare commands would otherwise compile the copy's modules on every run, where a user's
    # second run reads the bytecode of the first: every tool runs as a user's shell would.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    # `python` in the commands is this interpreter, as in an activated environment, for every
    # tool: a version manager's shim (pyenv's is a chain of bash scripts) would otherwise spend
    # half of each command's time on itself, the same for all, and its dozens of process starts
    # make the shared machine's noise the larger part of each ratio.
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    with tempfile.TemporaryDirectory(prefix="hd-peer-") as tmp:
        work = Path(tmp)
        venv = args.harnesslab_venv or make_venv(
            find_python312(args.python312), work / "hl-venv", HARNESS_LAB
        )
        suite = port_demo(venv, work)
        pairs = CommandPairs(suite, work)
        pairs.prepare()
        trials = 3 * len(VARIANTS) * args.repeat
        print(f"{trials} sequential trials per round, {args.rounds} rounds, alternating")
        times: dict[str, list[float]] = {"harnesslab": [], "none": [], "bwrap": []}
        kept: dict[str, list[Path]] = {"none": [], "bwrap": []}
        for number in range(args.rounds):
            round_dir = work / f"round{number}"
            round_dir.mkdir()
            times["harnesslab"].append(run_harnesslab(venv, round_dir, args.repeat))
            for sandbox in ("none", "bwrap"):
                results = round_dir / f"hd-{sandbox}"
                times[sandbox].append(run_harnessdrive(suite, results, args.repeat, sandbox))
                kept[sandbox].append(results)
            print(
                f"  round {number + 1}: Harness Lab {times['harnesslab'][-1]:.1f} s,"
                f" harnessdrive none {times['none'][-1]:.1f} s,"
                f" bwrap {times['bwrap'][-1]:.1f} s"
            )
        peer = statistics.median(times["harnesslab"])
        for sandbox, target in (("none", 0.5), ("bwrap", 0.6)):
            ours = statistics.median(times[sandbox])
            print(
                f"harnessdrive --sandbox {sandbox}: {ours:.1f} s vs Harness Lab {peer:.1f} s"
                f" = {ours / peer:.2f}x (target <= {target}x)"
            )
        pairs.measure(args.pairs)
        print("\n".join(pairs.lines()))
        phases([folder for folders in kept.values() for folder in folders])
        if args.profile:
            profile_once(suite, work, args.repeat)
        if args.mine is not None:
            mining_scratch = work / "mining"
            mining_scratch.mkdir()
            print(f"\nMining {args.mine_commits} newest commits of {args.mine.name}, alternating")
            mining = compare_mining(
                args.mine,
                scratch=mining_scratch,
                commits=args.mine_commits,
                repeats=args.mine_repeats,
                python312=args.python312,
                harnesslab_venv=venv,
            )
            print("\n".join(mining.lines()))


if __name__ == "__main__":
    main()
