"""What the twin run costs a passing change's grading: the deciding run alone, and with it.

    python benchmarks/witness_twins.py [--pairs 15]

For each pytest task of the demo suite: the demo project with the reference solution applied,
twice: once with the hidden file planted as the deciding run gets it (canaries), once as the
twin run gets it (the same, one expectation of one hidden test perturbed in place). The task's
own test command runs bare on each (``python -m pytest -q``, plugin autoload off), the two
alternating, ``--pairs`` times, timed by CPU time. Prints each task's medians and the median of
each pair's ratio ((deciding + twin) / deciding): what a passing change's test commands cost
with the twin run against without it. A failing change pays about the same: its twin starts
with the deciding run, before the outcome is known. The twin copy's build and setup come on
top (none of the demo tasks has a setup command).

There is no target below 2: the twin run is a whole second run by design (docs/security.md,
"Twins"); the number is printed so that its cost is known, not to be met.
"""

from __future__ import annotations

import argparse
import random
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from harnessdrive.grading.witness import plant, twin_file

SUITE = Path(__file__).resolve().parents[1] / "src/harnessdrive/demo/suite"


def _prepared(task: Path, root: Path, twin: bool) -> tuple[Path, list[str], str]:
    spec = tomllib.loads((task / "task.toml").read_text())
    project = (task / spec["repo"]["path"]).resolve()
    copy = root / f"{task.name}-{'twin' if twin else 'deciding'}"
    shutil.copytree(project, copy)
    patch = task / "solution" / "solution.patch"
    if patch.is_file():
        subprocess.run(["git", "apply", str(patch)], cwd=copy, check=True)
    hidden = [(h["target"], (task / h["source"]).read_bytes()) for h in spec["grade"]["hidden"]]
    plan, contents = plant("pytest", hidden, random.Random(7))
    perturbed = ""
    if twin:
        made = twin_file(plan, contents, random.Random(7))
        if made is None:
            raise SystemExit(f"{task.name}: no hidden test has an expectation to perturb")
        contents, perturbed = made.contents, made.twin.name
    for target, data in contents.items():
        (copy / target).write_bytes(data)
    command = spec["grade"]["command"].replace("{python}", shlex.quote(sys.executable))
    argv = shlex.split(command)
    argv += ["-p", "no:cacheprovider"]
    return copy, argv, perturbed


def _time(argv: list[str], cwd: Path) -> float:
    """The command's CPU time (user and system, its children included): on a shared machine
    the wall time mostly measures the neighbours."""
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15)
    args = parser.parse_args()
    ratios_all: list[float] = []
    with tempfile.TemporaryDirectory(prefix="witness-twins-") as scratch:
        root = Path(scratch)
        for task in sorted((SUITE / "tasks").iterdir()):
            spec = tomllib.loads((task / "task.toml").read_text())
            if (
                "pytest" not in spec.get("grade", {}).get("command", "")
                or "hidden" not in spec["grade"]
            ):
                continue
            deciding, argv, _ = _prepared(task, root, twin=False)
            twinned, _, perturbed = _prepared(task, root, twin=True)
            _time(argv, deciding), _time(argv, twinned)  # warm the caches once
            alone: list[float] = []
            twins: list[float] = []
            ratios: list[float] = []
            for n in range(args.pairs):
                order = [(deciding, alone), (twinned, twins)]
                if n % 2:
                    order.reverse()
                for folder, times in order:
                    times.append(_time(argv, folder))
                ratios.append((alone[-1] + twins[-1]) / alone[-1])
            ratios_all += ratios
            print(
                f"{task.name:22} twin of {perturbed:28} deciding"
                f" {statistics.median(alone) * 1000:7.1f} ms CPU"
                f"  twin run {statistics.median(twins) * 1000:7.1f} ms CPU"
                f"  ratio {statistics.median(ratios):.3f}"
            )
    print(
        "all tasks: median ratio (deciding + twin run) / deciding run"
        f" {statistics.median(ratios_all):.3f} for a passing change, 1 for a failing one"
    )


if __name__ == "__main__":
    main()
