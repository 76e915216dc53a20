"""harnessdrive next to Harness Lab 0.3.0 on Harness Lab's improvement demo, alternating.

    python benchmarks/improve.py [--rounds 3] [--python312 PATH] [--harnesslab-venv DIR]
                                 [--sandbox bwrap|none]

1. Installs Harness Lab 0.3.0 from PyPI into a scratch virtual environment (Python 3.12), as
   benchmarks/peer_overhead.py does, or reuses ``--harnesslab-venv``.
2. Ports its bundled ``demo-improve`` suite (one task, ``fewer-key-operations``) to task.toml
   form at benchmark time, from the installed files: the same prompt, fixture repository, gate
   command, hidden test, protected ``tests/``, objective script (injected into the measuring
   copy only), direction, target, three rounds, keep-best, the in-loop evaluator's budget and
   the two reference overlays.
3. Runs three scripted agents, one trial each, with each tool, alternating, ``--rounds`` times,
   doing the same work on both sides: an improver that applies one overlay per round and calls
   the evaluator twice per round (Harness Lab's ``fake-improver-evaluating``, harnessdrive's
   ``MeasuringImprover`` with ``pattern = "twice"``), one that changes nothing
   (``fake-noop``, ``noop``), and one whose first round breaks the code and is reverted, then
   recovers (``fake-breaker``, ``MeasuringImprover`` with ``break_in_round = 1``). One trial
   at a time each. Every run is a fresh CLI process with a fresh results folder, timed from
   start to exit.
4. Prints every time, the medians and the ratio (target: harnessdrive at most 0.5x).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import tomli_w

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mining_peer import HARNESS_LAB, find_python312, make_venv
from peer_overhead import timed

PEER_AGENTS = "fake-improver-evaluating,fake-noop,fake-breaker"
OUR_AGENTS = "evaluating,noop,breaker"
_IMPROVER = "harnessdrive.testing.improvers:MeasuringImprover"
OUR_VARIANTS = [
    {"harness": _IMPROVER, "name": "evaluating", "options": {"pattern": "twice"}},
    {"harness": "noop"},
    {
        "harness": _IMPROVER,
        "name": "breaker",
        "options": {"pattern": "none", "break_in_round": 1},
    },
]

_READ_SUITE = """
import json, pathlib, sys, yaml, harnesslab
suite = pathlib.Path(harnesslab.__file__).parent / "bundled" / "suites" / "demo-improve"
spec = yaml.safe_load((suite / "suite.yaml").read_text())
tasks = [yaml.safe_load((suite / t).read_text()) for t in spec["tasks"]]
json.dump({"folder": str(suite), "tasks": tasks}, sys.stdout)
"""


def _python(command: str) -> str:
    return "{python}" + command[len("python") :] if command.startswith("python ") else command


def port_demo_improve(venv: Path, root: Path) -> Path:
    """Harness Lab's ``demo-improve`` as a harnessdrive suite under ``root``."""
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", _READ_SUITE],
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(out.stdout)
    folder = Path(found["folder"])
    suite = root / "port-improve"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(folder / "fixture_repo", suite / "project", ignore=ignore)
    names = []
    for spec in found["tasks"]:
        task = suite / "tasks" / spec["id"]
        task.mkdir(parents=True)
        gate, improve = spec["verification"], spec["improve"]

        def copied(item: dict[str, str], task: Path = task) -> dict[str, str]:
            source = task / "files" / item["source"]
            source.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / "tasks" / item["source"], source)
            return {"source": source.relative_to(task).as_posix(), "target": item["dest"]}

        overlays = []
        for overlay in spec["reference_solution"]["improve_overlays"]:
            shutil.copytree(folder / "tasks" / overlay, task / "overlays" / overlay, ignore=ignore)
            overlays.append(f"overlays/{overlay}")
        objective = improve["objective"]
        data: dict[str, Any] = {
            "id": spec["id"],
            "title": spec["name"],
            "prompt": spec["prompt"],
            "repo": {"path": "../../project"},
            "grade": {
                "command": _python(gate["command"]),
                "hidden": [copied(item) for item in gate.get("inject", [])],
                "protected": [p.rstrip("/") + "/**" for p in gate["protected_paths"]],
                "timeout": float(gate["timeout_seconds"]),
            },
            "improve": {
                "rounds": improve.get("rounds", 3),
                "keep_best": improve.get("keep_best", True),
                "min_improvement": improve.get("min_improvement", 0.0),
                "overlays": overlays,
                "objective": {
                    "command": _python(objective["command"]),
                    "inject": [copied(item) for item in objective.get("inject", [])],
                    "direction": objective.get("direction", "minimize"),
                    "unit": objective.get("unit", ""),
                    "target": objective["target"],
                    "repeats": objective.get("repeats", 1),
                },
                "evaluator": {"budget": improve.get("evaluator", {}).get("budget", 0)},
            },
        }
        (task / "task.toml").write_text(tomli_w.dumps(data), encoding="utf-8")
        names.append(spec["id"])
    (suite / "suite.toml").write_text(
        tomli_w.dumps(
            {
                "name": "hl-demo-improve",
                "tasks": [f"tasks/{n}" for n in names],
                "variants": OUR_VARIANTS,
            }
        )
    )
    return suite


def run_harnesslab(venv: Path, work: Path) -> float:
    argv = [
        str(venv / "bin" / "harnesslab"), "--home", str(work / "hl-home"), "run", "demo-improve",
        "--variants", PEER_AGENTS, "-p", "1", "-y",
    ]  # fmt: skip
    return timed(argv, work)


def run_harnessdrive(suite: Path, results: Path, sandbox: str) -> float:
    argv = [
        sys.executable, "-m", "harnessdrive", "run", str(suite), "--harness", OUR_AGENTS,
        "--jobs", "1", "--sandbox", sandbox, "--results", str(results), "--json",
    ]  # fmt: skip
    seconds = timed(argv, suite.parent)
    found = [json.loads(p.read_text()) for p in sorted(results.glob("trials/**/result.json"))]
    outcomes = {(r["variant_label"], r["outcome"]) for r in found}
    if outcomes != {("evaluating", "pass"), ("noop", "fail"), ("breaker", "pass")}:
        sys.exit(f"harnessdrive graded wrongly: {sorted(outcomes)}")
    calls = {r["variant_label"]: r["metrics"].get("improve.evaluator_calls") for r in found}
    if calls.get("evaluating") != 6.0:
        sys.exit(f"the evaluating improver's calls: {calls}")
    curves = {
        r["variant_label"]: [
            r["metrics"][f"improve.curve.{n}"]
            for n in range(sum(k.startswith("improve.curve.") for k in r["metrics"]))
        ]
        for r in found
    }
    print(f"    harnessdrive curves: {curves}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python312", help="a Python 3.12 interpreter for Harness Lab")
    parser.add_argument("--harnesslab-venv", type=Path, help="an environment that has it")
    parser.add_argument("--sandbox", default="bwrap", choices=("bwrap", "none"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hd-improve-") as tmp:
        work = Path(tmp)
        venv = args.harnesslab_venv or make_venv(
            find_python312(args.python312), work / "hl-venv", HARNESS_LAB
        )
        suite = port_demo_improve(venv, work)
        times: dict[str, list[float]] = {"harnesslab": [], "harnessdrive": []}
        for number in range(args.rounds):
            round_dir = work / f"round{number}"
            round_dir.mkdir()
            times["harnesslab"].append(run_harnesslab(venv, round_dir))
            results = round_dir / "hd"
            times["harnessdrive"].append(run_harnessdrive(suite, results, args.sandbox))
            print(
                f"  round {number + 1}: Harness Lab {times['harnesslab'][-1]:.1f} s,"
                f" harnessdrive ({args.sandbox}) {times['harnessdrive'][-1]:.1f} s"
            )
        peer, ours = (statistics.median(times[name]) for name in ("harnesslab", "harnessdrive"))
        print(
            f"demo-improve, 3 scripted agents: harnessdrive {ours:.1f} s vs Harness Lab"
            f" {peer:.1f} s = {ours / peer:.2f}x (target <= 0.5x)"
        )


if __name__ == "__main__":
    main()
