"""Mining benchmarks. Prints ratios; nothing here asserts a time.

(a) History scan: ``scan_history`` against a bare ``git log --numstat`` over the same commits
    (no merges, no rename detection, same window). Goal: a ratio of at most 1.5.

    python benchmarks/mining.py [REPO] [--since 365d] [--runs 5] [--commits 4000]

Without REPO, a synthetic history is built once with the repo builder (a Python project whose
commits edit a few source and test files each, with some large and binary commits) in a
temporary folder.
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
from harnessdrive.mining.repository import head_commit, repository_root
from harnessdrive.mining.since import parse_since
from harnessdrive.testing.repo_builder import RepoBuilder


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", nargs="?", type=Path, help="a git repository to scan")
    parser.add_argument("--since", default="365d")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commits", type=int, default=4000, help="size of the synthetic history")
    args = parser.parse_args(argv)
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
