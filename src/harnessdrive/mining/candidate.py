"""A candidate task: one past commit that changed both source and test files.

The record carries everything validation needs without reading the history again: the commit
and its parent, every changed file with its blobs and modes, which files are hidden tests and
which form the gold patch, and whether a dependency manifest changed. File contents and patches
are read on demand (see :mod:`harnessdrive.mining.contents`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from harnessdrive.mining.classify import FileKind, classify_path, is_dependency_file
from harnessdrive.mining.logstream import ChangedPath, LoggedCommit
from harnessdrive.mining.message import decode_message, split_message
from harnessdrive.mining.prompt import agent_prompt
from harnessdrive.workspace.names import NameText

GitPath = NameText

ChangeKind = FileKind | Literal["submodule"]
ABSENT_BLOB = "0" * 40


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FileChange(_Model):
    """One file the commit changed."""

    path: GitPath
    kind: ChangeKind
    """test, doc, source, other; ``submodule`` for a gitlink (never written into a copy)."""
    status: Literal["A", "M", "D", "T"]
    old_mode: str | None
    """Git file mode at the parent (``100644``, ``100755``, ``120000``...); None if absent."""
    new_mode: str | None
    old_blob: str | None
    new_blob: str | None
    """Object id at the commit; None when the commit deleted the file."""
    added: int | None
    """Lines added; None for a binary file."""
    deleted: int | None
    dependency: bool = False
    """A dependency manifest or lockfile: a setup command must run again after writing it."""
    lfs_pointer: bool = False
    """The file at the commit is a Git LFS pointer, not the real content."""

    @property
    def lines(self) -> int:
        return (self.added or 0) + (self.deleted or 0)

    @property
    def binary(self) -> bool:
        return self.added is None


class Candidate(_Model):
    """A commit that may become a task once validation proves its tests."""

    id: str
    """The first 12 characters of the commit sha."""
    subject: str
    body: str
    """The message after the subject, without a closing paragraph of trailers."""
    commit: str
    parent: str
    hidden_tests: list[GitPath]
    """Test files the commit changed (added, edited or deleted): the agent never sees them."""
    gold_files: list[GitPath]
    """Every other file the commit changed, gitlinks excepted: the reference solution."""
    gold_lines: int
    """Lines added plus deleted in the gold patch's source and other files (docs excluded)."""
    changes_dependencies: bool
    """Whether a dependency manifest or lockfile changed (hidden tests or gold files)."""
    files: list[FileChange]
    committed: str = ""
    """The committer date (ISO 8601), so tasks can be sliced by a model's training cutoff."""

    @property
    def dependency_files(self) -> list[str]:
        return [f.path for f in self.files if f.dependency]

    @property
    def submodules(self) -> list[str]:
        """Gitlinks the commit moved; fresh copies leave submodules out."""
        return [f.path for f in self.files if f.kind == "submodule"]

    @property
    def lfs_pointers(self) -> list[str]:
        return [f.path for f in self.files if f.lfs_pointer]

    @property
    def binary_files(self) -> list[str]:
        return [f.path for f in self.files if f.binary and f.kind != "submodule"]

    def change(self, path: str) -> FileChange:
        for change in self.files:
            if change.path == path:
                return change
        raise KeyError(path)

    def prompt(self, test_command: str) -> str:
        """The text every harness gets for this task."""
        return agent_prompt(self.subject, self.body, test_command)


def _present(blob: str) -> str | None:
    return None if blob.strip("0") == "" else blob  # git prints zeros for "no file"


def file_change(changed: ChangedPath, *, lfs_pointer: bool = False) -> FileChange:
    kind: ChangeKind = "submodule" if changed.is_gitlink else classify_path(changed.path)
    old_blob, new_blob = _present(changed.old_blob), _present(changed.new_blob)
    return FileChange(
        path=changed.path,
        kind=kind,
        status=changed.status,  # --no-renames: only A, M, D, T
        old_mode=changed.old_mode if old_blob else None,
        new_mode=changed.new_mode if new_blob else None,
        old_blob=old_blob,
        new_blob=new_blob,
        added=changed.added,
        deleted=changed.deleted,
        dependency=kind != "submodule" and is_dependency_file(changed.path),
        lfs_pointer=lfs_pointer,
    )


def build_candidate(commit: LoggedCommit, lfs_blobs: frozenset[str] = frozenset()) -> Candidate:
    """The candidate record for a commit that passed every history rule."""
    subject, body = split_message(decode_message(commit.message))
    files = [file_change(c, lfs_pointer=c.new_blob in lfs_blobs) for c in commit.changes]
    return Candidate(
        id=commit.sha[:12],
        subject=subject,
        body=body,
        commit=commit.sha,
        parent=commit.parents[0],
        hidden_tests=[f.path for f in files if f.kind == "test"],
        gold_files=[f.path for f in files if f.kind in ("doc", "source", "other")],
        gold_lines=sum(f.lines for f in files if f.kind in ("source", "other")),
        changes_dependencies=any(f.dependency for f in files),
        files=files,
        committed=commit.committed,
    )
