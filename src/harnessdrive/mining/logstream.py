"""Parse one streaming ``git log -z --raw --numstat`` pass into commits and their changed files.

With ``-z`` every field ends in a NUL byte and paths are printed byte for byte, so any file name
survives. Each commit is a header (``\\x1e`` + sha, parents, committer date, message) followed
by its ``--raw`` records (``:modes blobs status`` then the path) and its ``--numstat`` records
(``added<TAB>deleted<TAB>path``, ``-`` for binary files).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

LOG_FORMAT = "--format=%x1e%H%x00%P%x00%cI%x00%B"
GITLINK_MODE = "160000"


@dataclass(frozen=True, slots=True)
class ChangedPath:
    """One file a commit changed."""

    path: str
    """Repository path; bytes that are not UTF-8 are kept as surrogate escapes (os.fsdecode)."""
    status: str
    """``A`` added, ``M`` modified, ``D`` deleted, ``T`` type changed."""
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str
    added: int | None
    """Lines added; None for a binary file."""
    deleted: int | None

    @property
    def lines(self) -> int:
        return (self.added or 0) + (self.deleted or 0)

    @property
    def is_gitlink(self) -> bool:
        return GITLINK_MODE in (self.old_mode, self.new_mode)

    @property
    def is_binary(self) -> bool:
        return self.added is None


@dataclass(frozen=True, slots=True)
class LoggedCommit:
    sha: str
    parents: tuple[str, ...]
    message: bytes
    changes: tuple[ChangedPath, ...]
    committed: str = ""
    """The committer date, ISO 8601 with its offset (git's ``%cI``)."""


def _tokens(chunks: Iterable[bytes]) -> Iterator[bytes]:
    pending = b""
    for chunk in chunks:
        pieces = (pending + chunk).split(b"\0")
        pending = pieces.pop()
        yield from pieces
    if pending:
        yield pending


def _numstat(token: bytes) -> tuple[int | None, int | None, bytes]:
    added, deleted, path = token.split(b"\t", 2)
    return (
        int(added) if added != b"-" else None,
        int(deleted) if deleted != b"-" else None,
        path,
    )


class _Commit:
    """A commit while its records arrive."""

    def __init__(self, sha: str, parents: tuple[str, ...], committed: str, message: bytes) -> None:
        self.sha = sha
        self.parents = parents
        self.committed = committed
        self.message = message
        self.raw: dict[bytes, tuple[str, str, str, str, str]] = {}
        self.counts: dict[bytes, tuple[int | None, int | None]] = {}

    def count(self, token: bytes) -> None:
        added, deleted, path = _numstat(token)
        if path in self.counts:  # a split type change: add both halves
            before_added, before_deleted = self.counts[path]
            if added is None or before_added is None:
                added = deleted = None
            else:
                added, deleted = added + before_added, (deleted or 0) + (before_deleted or 0)
        self.counts[path] = (added, deleted)

    def finish(self) -> LoggedCommit:
        changes = []
        for path, (old_mode, new_mode, old_blob, new_blob, status) in self.raw.items():
            added, deleted = self.counts.get(path, (0, 0))
            changes.append(
                ChangedPath(
                    os.fsdecode(path), status, old_mode, new_mode, old_blob, new_blob,
                    added, deleted,
                )
            )  # fmt: skip
        return LoggedCommit(
            self.sha, self.parents, self.message, tuple(changes), committed=self.committed
        )


def parse_log(chunks: Iterable[bytes]) -> Iterator[LoggedCommit]:
    """Commits from the output of ``git log -z --raw --numstat`` with LOG_FORMAT, in order."""
    tokens = _tokens(chunks)
    current: _Commit | None = None
    for token in tokens:
        head = token.lstrip(b"\n")
        if head.startswith(b"\x1e"):
            if current is not None:
                yield current.finish()
            parents = next(tokens, b"").decode("ascii").split()
            committed = next(tokens, b"").decode("ascii", errors="replace")
            message = next(tokens, b"")
            current = _Commit(head[1:].decode("ascii"), tuple(parents), committed, message)
        elif current is None or not head:
            continue
        elif head.startswith(b":"):
            # ":old_mode new_mode old_blob new_blob status"; the path is the next field.
            old_mode, new_mode, old_blob, new_blob, status = head[1:].decode("ascii").split()
            current.raw[next(tokens, b"")] = (old_mode, new_mode, old_blob, new_blob, status[:1])
        else:
            current.count(head)
    if current is not None:
        yield current.finish()
