"""What the twins of hidden tests cost a deciding test run: with twins and without, in pairs.

    python benchmarks/witness_twins.py [--pairs 15]

For each pytest task of the demo suite: the demo project with the reference solution applied
and the hidden file planted as grading plants it (canaries always), once with twins (the
default, at most two per file) and once without; the task's own test command runs bare on
each (``python -m pytest -q``, plugin autoload off), alternating, ``--pairs`` times, timed by
CPU time. Prints each task's medians, the median of each pair's ratio (with / without) and
how many twins ran.

Target: the twins add at most a tenth to the deciding run (ratio 1.10).
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

from harnessdrive.grading.twins import TWINS_PER_FILE
from harnessdrive.grading.witness import plant

SUITE = Path(__file__).resolve().parents[1] / "src/harnessdrive/demo/suite"


def _prepared(task: Path, root: Path, twins: int) -> tuple[Path, list[str], int]:
    spec = tomllib.loads((task / "task.toml").read_text())
    project = (task / spec["repo"]["path"]).resolve()
    copy = root / f"{task.name}-{twins}"
    shutil.copytree(project, copy)
    patch = task / "solution" / "solution.patch"
    if patch.is_file():
        subprocess.run(["git", "apply", str(patch)], cwd=copy, check=True)
    hidden = [(h["target"], (task / h["source"]).read_bytes()) for h in spec["grade"]["hidden"]]
    plan, contents = plant("pytest", hidden, random.Random(7), twins=twins)
    for target, data in contents.items():
        (copy / target).write_bytes(data)
    command = spec["grade"]["command"].replace("{python}", shlex.quote(sys.executable))
    argv = shlex.split(command)
    argv += ["-p", "no:cacheprovider"]
    return copy, argv, sum(1 for c in plan.canaries if c.twin_of)


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
            with_twins, argv, count = _prepared(task, root, TWINS_PER_FILE)
            without, _, _ = _prepared(task, root, 0)
            _time(argv, with_twins), _time(argv, without)  # warm the caches once
            on: list[float] = []
            off: list[float] = []
            ratios: list[float] = []
            for n in range(args.pairs):
                order = [(with_twins, on), (without, off)]
                if n % 2:
                    order.reverse()
                for folder, times in order:
                    times.append(_time(argv, folder))
                ratios.append(on[-1] / off[-1])
            ratios_all += ratios
            print(
                f"{task.name:22} twins {count}  with {statistics.median(on) * 1000:7.1f} ms CPU"
                f"  without {statistics.median(off) * 1000:7.1f} ms CPU"
                f"  ratio {statistics.median(ratios):.3f}"
            )
    print(f"all tasks: median ratio with/without twins {statistics.median(ratios_all):.3f}"
          " (target at most 1.10)")  # fmt: skip


if __name__ == "__main__":
    main()
