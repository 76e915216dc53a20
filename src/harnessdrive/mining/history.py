"""Scan a repository's history for candidate tasks in one streaming ``git log`` pass.

Commits come from ``git log HEAD`` since ``--since``, newest first, without merges or rename
detection. Each commit is kept as a candidate or skipped for the first of these reasons:
``first commit`` (no parent, including the oldest commit of a shallow clone), ``too large``
(more than 30 files, or more than 1,000 added plus deleted lines), ``no source changes``,
``no test changes`` (a test runner's settings file alone, such as ``tox.ini``, is none).
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from harnessdrive.mining.candidate import Candidate, GitPath, build_candidate
from harnessdrive.mining.classify import classify_path
from harnessdrive.mining.contents import lfs_pointer_blobs
from harnessdrive.mining.gitread import stream_git, try_git
from harnessdrive.mining.logstream import LOG_FORMAT, LoggedCommit, parse_log
from harnessdrive.mining.repository import locate, refuse_partial_clone, resolve_revision
from harnessdrive.mining.runners import is_runner_settings
from harnessdrive.mining.since import DEFAULT_SINCE, parse_since

MAX_FILES = 30
MAX_LINES = 1000

SkipReason = Literal["first commit", "too large", "no source changes", "no test changes"]
SKIP_REASONS: tuple[SkipReason, ...] = (
    "first commit",
    "too large",
    "no source changes",
    "no test changes",
)

# Without --raw, git could not tell a submodule (gitlink) or a blob id; it adds little to the
# cost of --numstat, which already diffs every file.
LOG_OPTIONS = (
    "-z",
    "--no-merges",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--ignore-submodules=none",
    "--raw",
    "--numstat",
    "--no-abbrev",
    LOG_FORMAT,
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScanCounts(_Model):
    commits: int
    """Non-merge commits in the window."""
    candidates: int
    skipped: dict[SkipReason, int]


class ScanResult(_Model):
    repo: GitPath
    """The repository's top folder."""
    head: str
    since: str
    """``--since`` as given (``365d``, ``2026-01-15``)."""
    since_description: str
    """``365 days ago`` or the date, for sentences."""
    shallow: bool
    """A shallow clone: its oldest commits count as first commits."""
    counts: ScanCounts
    candidates: list[Candidate]
    """Newest first."""
    head_date: str | None = None
    """HEAD's commit date (``YYYY-MM-DD``), read only when no commit fell in the window."""


def skip_reason(
    commit: LoggedCommit, max_files: int = MAX_FILES, max_lines: int = MAX_LINES
) -> SkipReason | None:
    """Why a commit cannot be a task, or None when it can."""
    if not commit.parents:
        return "first commit"
    changes = commit.changes
    if len(changes) > max_files or sum(c.lines for c in changes) > max_lines:
        return "too large"
    kinds = {classify_path(c.path) for c in changes if not c.is_gitlink}
    if "source" not in kinds:
        return "no source changes"
    # A runner's settings file (tox.ini, pytest.ini, conftest.py) alone holds no test that
    # could fail before the fix: such a commit is skipped before any copy is made.
    if not any(
        classify_path(c.path) == "test" and not is_runner_settings(c.path)
        for c in changes
        if not c.is_gitlink
    ):
        return "no test changes"
    return None


def scan_history(
    repo: str | os.PathLike[str],
    since: str = DEFAULT_SINCE,
    *,
    now: datetime | None = None,
    max_files: int = MAX_FILES,
    max_lines: int = MAX_LINES,
    rev: str | None = None,
) -> ScanResult:
    """Candidate tasks from the history of ``repo`` (which is only read), back from ``rev``
    (default HEAD; a number of days then counts back from its commit date)."""
    window = parse_since(since, now)  # a bad --since is reported before anything is read
    root, head, shallow = locate(repo)
    if rev is not None:
        head, dated = resolve_revision(root, rev)
        window = parse_since(since, now or dated)
    refuse_partial_clone(root)

    commits = 0
    skipped: dict[SkipReason, int] = {}
    kept: list[LoggedCommit] = []
    chunks = stream_git(root, ["log", *LOG_OPTIONS, *window.git_arguments, head, "--"])
    for commit in parse_log(chunks):
        commits += 1
        reason = skip_reason(commit, max_files, max_lines)
        if reason is None:
            kept.append(commit)
        else:
            skipped[reason] = skipped.get(reason, 0) + 1

    new_blobs = (c.new_blob for commit in kept for c in commit.changes if not c.is_gitlink)
    lfs = lfs_pointer_blobs(root, (b for b in new_blobs if b.strip("0")))
    candidates = [build_candidate(commit, lfs) for commit in kept]
    return ScanResult(
        repo=str(root),
        head=head,
        since=since,
        since_description=window.description,
        shallow=shallow,
        counts=ScanCounts(
            commits=commits,
            candidates=len(candidates),
            skipped={r: skipped[r] for r in SKIP_REASONS if r in skipped},
        ),
        candidates=candidates,
        head_date=None if commits else _commit_date(root, head),
    )


def _commit_date(root: Path, commit: str) -> str | None:
    found = try_git(root, ["log", "-1", "--format=%cs", commit, "--"])
    date = found.decode("ascii", "replace").strip() if found else ""
    return date or None
