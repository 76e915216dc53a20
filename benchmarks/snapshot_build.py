"""A git snapshot built from a packed tree next to one built file by file. Prints, asserts nothing.

    python benchmarks/snapshot_build.py [REPO] [--ref HEAD] [--rounds 5]

``build_snapshot`` copies a commit's tree into the snapshot as one pack and lets git check the
files out; a tree it cannot take that way (submodules, SHA-256) is written file by file, then
added and repacked. Both are timed here on the same commit, alternating: the first through
``build_snapshot``, the second through the steps of that slower way (``write_tree_files``, then
``git add``, ``write-tree`` and ``repack`` in a new repository). REPO defaults to this checkout.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from harnessdrive.workspace.git import git
from harnessdrive.workspace.snapshot import build_snapshot, write_tree_files


def packed(repo: Path, ref: str, dest: Path) -> int:
    return build_snapshot(repo, ref, dest).files


def file_by_file(repo: Path, ref: str, dest: Path) -> int:
    root = dest / "base"
    root.mkdir(parents=True)
    git("init", "-q", "--template=", str(root))
    write_tree_files(repo, ref, root)
    git("add", "-A", "-f", "--", ".", cwd=root)
    git("write-tree", cwd=root)
    git("repack", "-a", "-d", "-n", "-q", "--no-write-bitmap-index", git_dir=root / ".git")
    return len(git("ls-files", "-z", cwd=root).split(b"\0")) - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, nargs="?", default=Path(__file__).parents[1])
    parser.add_argument("--ref", default="HEAD")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"packed": [], "file by file": []}
    files = 0
    with tempfile.TemporaryDirectory(prefix="snapshot-bench-") as scratch:
        for index in range(args.rounds):
            for name, build in (("packed", packed), ("file by file", file_by_file)):
                dest = Path(scratch) / f"{name}-{index}"
                started = time.perf_counter()
                files = build(args.repo, args.ref, dest)
                times[name].append(time.perf_counter() - started)
                shutil.rmtree(dest)
    print(f"{args.repo} at {args.ref}: {files} files, {args.rounds} rounds")
    for name, values in times.items():
        print(f"  {name:12s} median {statistics.median(values) * 1000:7.1f} ms,"
              f" best {min(values) * 1000:7.1f} ms")  # fmt: skip
    ratio = statistics.median(times["packed"]) / statistics.median(times["file by file"])
    print(f"  packed / file by file (medians): {ratio:.2f}")


if __name__ == "__main__":
    main()
