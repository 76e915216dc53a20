"""How many bytes a run's copies of its tasks' files take, read without writing any of them.

A run of known changes may keep its scratch root on a memory file system when there is room
for its copies (sandbox/scratch_place.py); this module says how much room that is.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harnessdrive.tasks.loading import Task
from harnessdrive.workspace.git import run_git
from harnessdrive.workspace.snapshot import folder_entries, is_git_source

COPIES_PER_JOB = 8
"""Copies of a task's tree a worker holds at once, with a margin: its snapshots, the agent's
workspace, the grading copies and setup prototypes."""


def tasks_footprint(tasks: Iterable[Task], jobs: int) -> int | None:
    """:func:`run_footprint` of the tasks' trees; None when a task's setup may download (its
    dependencies then land in every copy, however small the tree)."""
    tasks = list(tasks)
    if any(t.spec.setup.commands and t.spec.setup.network == "host" for t in tasks):
        return None
    return run_footprint([(t.repo_path, t.spec.repo.ref) for t in tasks], jobs)


def run_footprint(sources: Iterable[tuple[Path, str | None]], jobs: int) -> int | None:
    """Bytes that ``jobs`` workers' copies of the largest tree among ``sources`` take; None
    when a tree cannot be read (the run then keeps its scratch on disk).

    Each repository is measured once, at the first ref given: the commits of one repository
    that a suite starts from differ little in size.
    """
    sizes: dict[Path, int] = {}
    for repo_path, ref in sources:
        if repo_path in sizes:
            continue
        size = tree_bytes(repo_path, ref)
        if size is None:
            return None
        sizes[repo_path] = size
    return max(sizes.values(), default=0) * COPIES_PER_JOB * max(jobs, 1)


def tree_bytes(repo_path: Path, ref: str | None) -> int | None:
    """The size of the files a snapshot of ``repo_path`` at ``ref`` holds, or None."""
    if is_git_source(repo_path, ref):
        listed = run_git(
            ["ls-tree", "-r", "-l", "-z", "--end-of-options", ref or "HEAD"], cwd=repo_path
        )
        if listed.returncode != 0:
            return None
        total = 0
        for record in listed.stdout.split(b"\0"):
            fields = record.partition(b"\t")[0].split()
            if len(fields) == 4 and fields[3].isdigit():
                total += int(fields[3])
        return total
    return _folder_bytes(repo_path)


def _folder_bytes(folder: Path) -> int | None:
    try:
        return sum(path.lstat().st_size for path, is_dir in folder_entries(folder) if not is_dir)
    except OSError:
        return None
