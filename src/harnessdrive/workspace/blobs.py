"""Reading blobs from a repository one at a time, in chunks, so no file sits whole in memory."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from harnessdrive.errors import WorkspaceError
from harnessdrive.workspace.git import git_head, start_git

_CHUNK = 1024 * 1024
LOOKUP_LIMIT_BYTES = 16 * 1024 * 1024
"""The most of one blob :class:`LazyBlobs` returns (what a check reads of a file's content)."""


class BlobReader:
    """One ``git cat-file --batch`` kept open: ask for a blob, copy it out in chunks."""

    def __init__(self, proc: subprocess.Popen[bytes], source: Path) -> None:
        self._proc = proc
        self._source = source

    def copy(self, sha: str, sink: BinaryIO) -> int:
        """Write blob ``sha`` to ``sink``; returns its size."""
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(sha.encode() + b"\n")
        stdin.flush()
        header = stdout.readline().decode(errors="replace").split(" ")
        if len(header) != 3:
            raise WorkspaceError(f"object {sha} is missing from {self._source}")
        size = left = int(header[2])
        while left:
            chunk = stdout.read(min(left, _CHUNK))
            if not chunk:
                raise WorkspaceError(f"object {sha} ended early in {self._source}")
            sink.write(chunk)
            left -= len(chunk)
        stdout.read(1)  # the newline after each object
        return size


@contextmanager
def blob_reader(git_dir: Path | None = None, *, cwd: Path | None = None) -> Iterator[BlobReader]:
    """A reader of the repository at ``git_dir`` (or the one ``cwd`` lies in)."""
    with tempfile.TemporaryFile() as errors:
        proc = start_git(("cat-file", "--batch"), git_dir=git_dir, cwd=cwd, stderr=errors)
        try:
            yield BlobReader(proc, git_dir or cwd or Path("."))
        finally:
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()
            proc.wait()


class LazyBlobs(Mapping[str, bytes]):
    """Blob contents by id, each read from git when looked up and never kept."""

    def __init__(
        self,
        shas: frozenset[str],
        *,
        git_dir: Path | None = None,
        cwd: Path | None = None,
        limit: int = LOOKUP_LIMIT_BYTES,
    ) -> None:
        self._shas = shas
        self._git_dir = git_dir
        self._cwd = cwd
        self._limit = limit

    def __getitem__(self, sha: str) -> bytes:
        if sha not in self._shas:
            raise KeyError(sha)
        data, _ = git_head(
            "cat-file", "blob", sha, limit=self._limit, git_dir=self._git_dir, cwd=self._cwd
        )
        return data

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._shas))

    def __len__(self) -> int:
        return len(self._shas)
