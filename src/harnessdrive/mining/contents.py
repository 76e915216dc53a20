"""Read a candidate's files and patches from the repository, on demand and read-only."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from harnessdrive.errors import UserError
from harnessdrive.mining.candidate import Candidate
from harnessdrive.mining.gitread import run_git

# A Git LFS pointer is a short text file that starts with this line.
LFS_POINTER_PREFIX = b"version https://git-lfs.github.com/spec/"
LFS_POINTER_MAX_BYTES = 1024

_DIFF_OPTIONS = (
    "--binary",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--no-relative",
    "--ignore-submodules=none",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


def read_blobs(repo: Path, blobs: Iterable[str]) -> dict[str, bytes]:
    """The contents of git objects by id, read in one ``git cat-file --batch`` call."""
    wanted = list(dict.fromkeys(blobs))
    if not wanted:
        return {}
    output = run_git(
        repo, ["cat-file", "--batch"], stdin="".join(f"{b}\n" for b in wanted).encode()
    )
    found: dict[str, bytes] = {}
    position = 0
    for blob in wanted:
        end = output.index(b"\n", position)
        header = output[position:end].split()
        if len(header) != 3:  # "<id> missing": a damaged or partial clone
            raise UserError(f"git object {blob} is missing from {repo}")
        size = int(header[2])
        found[blob] = output[end + 1 : end + 1 + size]
        position = end + 1 + size + 1  # the object, then a newline
    return found


def blob_sizes(repo: Path, blobs: Iterable[str]) -> dict[str, int]:
    wanted = list(dict.fromkeys(blobs))
    if not wanted:
        return {}
    output = run_git(
        repo,
        ["cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
        stdin="".join(f"{b}\n" for b in wanted).encode(),
    )
    sizes: dict[str, int] = {}
    for line in output.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob":
            sizes[parts[0]] = int(parts[2])
    return sizes


def lfs_pointer_blobs(repo: Path, blobs: Iterable[str]) -> frozenset[str]:
    """Which of these blobs are Git LFS pointers (small, so two short git calls for all)."""
    small = [b for b, size in blob_sizes(repo, blobs).items() if size <= LFS_POINTER_MAX_BYTES]
    return frozenset(
        b for b, data in read_blobs(repo, small).items() if data.startswith(LFS_POINTER_PREFIX)
    )


def file_contents(
    repo: Path,
    candidate: Candidate,
    paths: Iterable[str],
    side: Literal["commit", "parent"] = "commit",
) -> dict[str, bytes | None]:
    """Each path's bytes at the commit (or its parent); None where the file does not exist.

    A symbolic link's bytes are its target; the mode is on ``candidate.change(path)``.
    """
    changes = [candidate.change(path) for path in paths]
    blobs = {c.path: c.new_blob if side == "commit" else c.old_blob for c in changes}
    data = read_blobs(repo, (b for b in blobs.values() if b))
    return {path: (data[blob] if blob else None) for path, blob in blobs.items()}


def hidden_test_contents(repo: Path, candidate: Candidate) -> dict[str, bytes | None]:
    """The hidden tests as the commit left them; None for a test file the commit deleted."""
    return file_contents(repo, candidate, candidate.hidden_tests)


def diff_between(repo: Path, candidate: Candidate, paths: list[str]) -> bytes:
    """``git diff --binary --no-renames parent commit -- paths``: applies with ``git apply``."""
    if not paths:
        return b""
    return run_git(repo, ["diff", *_DIFF_OPTIONS, candidate.parent, candidate.commit, "--", *paths])


def gold_patch(repo: Path, candidate: Candidate) -> bytes:
    """The reference solution: the commit's change to every file that is not a hidden test."""
    return diff_between(repo, candidate, candidate.gold_files)


def hidden_test_patch(repo: Path, candidate: Candidate) -> bytes:
    return diff_between(repo, candidate, candidate.hidden_tests)
