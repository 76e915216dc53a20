"""Mining benchmarks. Prints ratios; nothing here asserts a time.

(a) History scan: ``scan_history`` against a bare ``git log --numstat`` over the same commits
    (no merges, no rename detection, same window). Goal: a ratio of at most 1.5.

    python benchmarks/mining.py [REPO] [--since 365d] [--runs 5] [--commits 4000]

(b) Validation time per kept task with shared environments and fast rejection, against the same
    validation without them (every grading copy builds its own environment, and every candidate
    goes straight to the full test command). Both run side by side in this one process, on the
    same history, each from an empty suite folder, and must keep the same tasks.

    python benchmarks/mining.py --validation [REPO --test-cmd CMD] [--since ...] [--jobs 1]
        [--factors]

Without REPO, (a) builds a synthetic history once with the repo builder (a Python project whose
commits edit a few source and test files each, with some large and binary commits), and (b) a
smaller one: a Python project with three dependencies (local wheels) and a test suite of a few
seconds, half of whose test-changing commits fix a bug and half only add a test that already
passes. ``--factors`` also measures each of the two measures alone.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harnessdrive.mining import scan_history
from harnessdrive.mining.gitread import git_env
from harnessdrive.mining.mine import MineOptions, MineResult, mine
from harnessdrive.mining.repository import head_commit, repository_root
from harnessdrive.mining.since import parse_since
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.testing.wheels import make_wheel, wheel_name


def build_history(path: Path, commits: int, seed: int = 7) -> Path:
    """A deterministic synthetic project: source and tests edited a few lines at a time."""
    rng = random.Random(seed)
    modules = 300
    files: dict[str, list[str]] = {}
    for i in range(modules):
        files[f"pkg/mod{i}.py"] = [f"def f{i}_{j}(x):  # {rng.random()}\n" for j in range(150)]
        files[f"tests/test_mod{i}.py"] = [f"def test_{i}_{j}(): assert {j}\n" for j in range(60)]
    repo = RepoBuilder(path)
    repo.commit("Initial", {name: "".join(lines) for name, lines in files.items()})
    for n in range(commits):
        touched: dict[str | bytes, str | bytes] = {}
        kind = rng.random()
        count = 40 if kind < 0.02 else rng.randint(1, 4)  # a few commits are too large
        for name in rng.sample(sorted(f for f in files if f.startswith("pkg/")), count):
            lines = files[name]
            for _ in range(rng.randint(1, 12)):
                lines[rng.randrange(len(lines))] = f"    x = {rng.random()}  # edit {n}\n"
            touched[name] = "".join(lines)
            test = name.replace("pkg/mod", "tests/test_mod")
            if rng.random() < 0.4:
                files[test].append(f"def test_edit_{n}(): assert {n}\n")
                touched[test] = "".join(files[test])
        if kind > 0.97:
            touched[f"assets/blob{n}.bin"] = rng.randbytes(2048)
        if 0.90 < kind <= 0.93:
            touched["docs/changes.md"] = f"change {n}\n"
        repo.commit(f"Change {n}\n\nBody of change {n}.", touched)
    repo.close()
    return path


def best_of(runs: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def part_a(repo: Path, since: str, runs: int) -> float:
    root = repository_root(repo)
    head = head_commit(root)
    window = parse_since(since)
    bare = [
        "git", "-C", str(root), "-c", "log.showRoot=false",
        "log", "--numstat", "--no-merges", "--no-renames", *window.git_arguments, head,
    ]  # fmt: skip

    def run_bare() -> None:
        subprocess.run(bare, stdout=subprocess.DEVNULL, env=git_env(), check=True)

    result = scan_history(root, since)  # warm the caches once, and report the sizes
    bare_seconds = best_of(runs, run_bare)
    scan_seconds = best_of(runs, lambda: scan_history(root, since))
    ratio = scan_seconds / bare_seconds
    print(f"repository: {root}")
    print(
        f"commits: {result.counts.commits}, candidates: {result.counts.candidates}, "
        f"skipped: {dict(result.counts.skipped)}"
    )
    print(f"git log --numstat: {bare_seconds:.3f} s (best of {runs})")
    print(f"scan_history:      {scan_seconds:.3f} s (best of {runs})")
    print(f"(a) scan / bare git log ratio: {ratio:.2f} (goal: at most 1.5)")
    return ratio


SYNTHETIC_TEST_COMMAND = ".venv/bin/python -m unittest discover -s tests -q"
_SLOW_TEST = (
    "import time\nimport unittest\n\nimport lib\n\n\nclass T{i}(unittest.TestCase):\n"
    "    def test_{i}(self):\n        time.sleep(0.3)\n"
    "        self.assertEqual(lib.f{i}(1), {i} + 1)\n"
)
_FIX_TEST = (
    "import unittest\n\nimport lib\n\n\nclass Fix{i}(unittest.TestCase):\n"
    "    def test_fix(self):\n        self.assertEqual(lib.g{i}(2), 4)\n"
)


def build_validation_history(path: Path, candidates: int = 8, seed: int = 11) -> Path:
    """A project whose test suite takes a few seconds and whose tests need three dependencies."""
    rng = random.Random(seed)
    wheels = {
        f"wheels/{wheel_name(name, '1.0')}": make_wheel(
            name, "1.0", {f"{name}/__init__.py": f"VALUE = {rng.randint(1, 9)}\n"}
        )
        for name in ("alpha", "beta", "gamma")
    }
    requirements = "".join(f"./{path}\n" for path in sorted(wheels))
    functions = [f"def f{i}(x):\n    return x + {i}\n" for i in range(8)]
    functions += [f"def g{i}(x):\n    return x * 3\n" for i in range(candidates)]
    lib = "import alpha\nimport beta\nimport gamma\n\n\n" + "\n\n".join(functions)
    files: dict[str | bytes, str | bytes] = {**wheels, "requirements.txt": requirements}
    files["lib.py"] = lib
    files.update({f"tests/test_slow{i}.py": _SLOW_TEST.format(i=i) for i in range(8)})
    repo = RepoBuilder(path)
    repo.commit("Start", files)
    for i in range(candidates):
        if i % 2 == 0:  # a real fix: its test fails before and passes after
            lib = lib.replace(f"def g{i}(x):\n    return x * 3", f"def g{i}(x):\n    return x * 2")
            test = _FIX_TEST.format(i=i)
        else:  # only a comment and a test of what already works
            lib += f"\n# note {i}\n"
            test = _SLOW_TEST.format(i=0).replace("class T0", f"class Again{i}")
        repo.commit(f"Change g{i}", {"lib.py": lib, f"tests/test_change{i}.py": test})
    repo.close()
    return path


def _validate(
    repo: Path, folder: Path, test_cmd: str, since: str, jobs: int, reuse: bool, fast: bool
) -> MineResult:
    options = MineOptions(
        repo=repo,
        since=since,
        test_command=test_cmd,
        validate=True,
        jobs=jobs,
        output=folder,
        reuse_environments=reuse,
        fast_reject=fast,
    )
    return mine(options, sandbox="none", python=sys.executable)


def part_b(repo: Path, test_cmd: str, since: str, jobs: int, factors: bool) -> float:
    variants = {"with both": (True, True), "without either": (False, False)}
    if factors:
        variants = {
            **variants,
            "environments only": (True, False),
            "fast rejection only": (False, True),
        }
    seconds: dict[str, float] = {}
    kept: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="harnessdrive-bench-b-") as scratch:
        for name, (reuse, fast) in variants.items():
            started = time.perf_counter()
            result = _validate(repo, Path(scratch) / name.replace(" ", "-"), test_cmd, since,
                               jobs, reuse, fast)  # fmt: skip
            seconds[name] = time.perf_counter() - started
            summary = result.summary
            kept[name] = [task.id for task in summary.tasks]
            environments = summary.environments
            built = len(environments.built) if environments else 0
            print(
                f"{name:20s} {seconds[name]:7.1f} s, kept {len(kept[name])} of "
                f"{summary.counts.checked} checked, rejected {dict(summary.counts.rejected)}, "
                f"environments built {built}"
            )
    if len({tuple(ids) for ids in kept.values()}) != 1:
        print(f"the variants kept different tasks: {kept}")
        return float("nan")
    count = max(len(kept["with both"]), 1)
    per_task = {name: value / count for name, value in seconds.items()}
    for name, value in per_task.items():
        print(f"per kept task, {name:20s} {value:7.2f} s")
    ratio = per_task["without either"] / per_task["with both"]
    print(f"(b) validation time per kept task, without / with: {ratio:.2f}x")
    if factors:
        for name in ("environments only", "fast rejection only"):
            gain = per_task["without either"] / per_task[name]
            print(f"    {name}: {gain:.2f}x faster than neither")
    return ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", nargs="?", type=Path, help="a git repository")
    parser.add_argument("--since", default="365d")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commits", type=int, default=4000, help="size of the synthetic history")
    parser.add_argument("--validation", action="store_true", help="run part (b) instead of (a)")
    parser.add_argument("--test-cmd", help="(b) with REPO: the test command")
    parser.add_argument("--jobs", type=int, default=1, help="(b) commits checked at a time")
    parser.add_argument("--factors", action="store_true", help="(b) also each measure alone")
    args = parser.parse_args(argv)
    if args.validation:
        if args.repo is not None:
            if not args.test_cmd:
                parser.error("--validation with REPO needs --test-cmd")
            part_b(args.repo, args.test_cmd, args.since, args.jobs, args.factors)
            return 0
        with tempfile.TemporaryDirectory(prefix="harnessdrive-bench-") as folder:
            repo = build_validation_history(Path(folder) / "repo")
            part_b(repo, SYNTHETIC_TEST_COMMAND, "2000-01-01", args.jobs, args.factors)
        return 0
    if args.repo is not None:
        part_a(args.repo, args.since, args.runs)
        return 0
    with tempfile.TemporaryDirectory(prefix="harnessdrive-bench-") as folder:
        started = time.perf_counter()
        repo = build_history(Path(folder) / "repo", args.commits)
        print(f"built {args.commits + 1} commits in {time.perf_counter() - started:.1f} s")
        # The synthetic history is dated 2024; look at all of it.
        part_a(repo, "2000-01-01", args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
