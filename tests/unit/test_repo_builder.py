from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harnessdrive.testing.repo_builder import (
    DEFAULT_AUTHOR,
    Executable,
    Gitlink,
    RepoBuilder,
    Symlink,
    lfs_pointer,
)


def build_small(path: Path) -> list[str]:
    repo = RepoBuilder(path)
    shas = [
        repo.commit("Initial", {"src/a.py": "a = 1\n", "tests/test_a.py": "t\n"}),
        repo.commit("Second\n\nBody.", {"src/a.py": "a = 2\n"}, delete=["tests/test_a.py"]),
    ]
    repo.close()
    return shas


def test_histories_are_deterministic(tmp_path: Path) -> None:
    first = build_small(tmp_path / "one")
    assert first == build_small(tmp_path / "two")
    # Fixed names, emails and dates: the sha never changes between runs or machines.
    assert first[0] == "3126e388a547768085fbac6ab96315b36f284a2e"


def test_defaults_are_fixed_and_dates_advance(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    for i in range(3):
        repo.commit(f"C{i}", {"a.txt": str(i)})
    log = repo.git("log", "--format=%an|%ae|%cn|%ce|%aI|%cI|%s").splitlines()
    assert log == [
        f"{DEFAULT_AUTHOR[0]}|{DEFAULT_AUTHOR[1]}|{DEFAULT_AUTHOR[0]}|{DEFAULT_AUTHOR[1]}|"
        f"2024-01-01T0{i}:00:00+00:00|2024-01-01T0{i}:00:00+00:00|C{i}"
        for i in (2, 1, 0)
    ]


def test_explicit_dates_and_people(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit(
        "Dated",
        {"a": "1"},
        date=datetime(2025, 6, 1, 12, tzinfo=UTC),
        author=("Ann", "ann@example.com"),
        committer=("Bob", "bob@example.com"),
    )
    repo.commit("Naive string date", {"a": "2"}, date="2025-06-02T08:30:00")
    assert repo.git("log", "--format=%an %cn %cI").splitlines() == [
        "Dev Dev 2025-06-02T08:30:00+00:00",
        "Ann Bob 2025-06-01T12:00:00+00:00",
    ]


def test_every_kind_of_file(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit(
        "All kinds",
        {
            "text.txt": "hello\n",
            "blob.bin": b"\x00\xff\x10",
            "run.sh": Executable("#!/bin/sh\n"),
            "link": Symlink("text.txt"),
            "vendor/lib": Gitlink("ab" * 20),
            b"caf\xe9.txt": b"latin-1 name",
            'we"ird\\ name\n.txt': "quoted",
        },
    )
    listing = repo.git("ls-tree", "-r", "-z", "HEAD")
    modes = {
        path: meta.split()[0]
        for meta, path in (entry.split("\t", 1) for entry in listing.split("\0") if entry)
    }
    assert modes == {
        "text.txt": "100644",
        "blob.bin": "100644",
        "run.sh": "100755",
        "link": "120000",
        "vendor/lib": "160000",
        "caf\ufffd.txt": "100644",
        'we"ird\\ name\n.txt': "100644",
    }
    assert repo.git("cat-file", "-p", "HEAD:link") == "text.txt"
    folder = repo.checkout()
    assert (folder / "blob.bin").read_bytes() == b"\x00\xff\x10"
    assert (folder / "caf\udce9.txt").read_bytes() == b"latin-1 name"


def test_deletes_and_edits_build_on_the_parent(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("One", {"a": "1", "b": "2", "dir/c": "3"})
    repo.commit("Two", {"a": "changed"}, delete=["b", "dir/c"])
    assert repo.git("ls-tree", "-r", "--name-only", "HEAD").split() == ["a"]
    assert repo.git("show", "HEAD:a") == "changed"


def test_branches_merges_and_roots(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    base = repo.commit("Base", {"a": "1"})
    repo.create_branch("side")
    side = repo.commit("Side", {"b": "1"}, branch="side")
    main = repo.commit("Main", {"c": "1"})
    merge = repo.merge(side, message="Merge side")
    orphan = repo.commit("Orphan", {"z": "1"}, branch="orphan", parents=[])
    assert repo.git("rev-parse", f"{merge}^1", f"{merge}^2").split() == [main, side]
    assert repo.git("rev-parse", f"{side}^").strip() == base
    assert repo.git("log", "--format=%P", "-1", orphan).strip() == ""
    assert repo.tip() == merge and repo.tip("side") == side
    # A merge keeps the tree of the branch it lands on.
    assert repo.git("ls-tree", "--name-only", merge).split() == ["a", "c"]


def test_a_root_commit_on_a_branch_with_history(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Old", {"a": "1"})
    root = repo.commit("New root", {"b": "1"}, parents=[])
    assert repo.git("rev-list", "--count", "HEAD").strip() == "1"
    assert repo.tip() == root


def test_reopening_continues_the_history(tmp_path: Path) -> None:
    first = RepoBuilder(tmp_path / "repo")
    one = first.commit("One", {"a": "1"})
    first.close()
    again = RepoBuilder(tmp_path / "repo")
    two = again.commit("Two", {"b": "1"})
    assert again.git("rev-parse", f"{two}^").strip() == one
    assert again.git("ls-tree", "--name-only", "HEAD").split() == ["a", "b"]


def test_non_utf8_messages_and_encodings(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    raw = repo.commit(b"caf\xe9", {"a": "1"})
    declared = repo.commit(b"caf\xe9", {"a": "2"}, encoding="ISO-8859-1")
    assert repo.git("cat-file", "commit", raw).endswith("caf\ufffd\n")
    assert "encoding ISO-8859-1" in repo.git("cat-file", "commit", declared)
    assert repo.git("log", "-1", "--format=%s", declared).strip() == "caf\u00e9"


def test_a_shallow_clone(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    for i in range(4):
        repo.commit(f"C{i}", {"a": str(i)})
    clone = repo.shallow_clone(tmp_path / "clone", depth=2)
    assert (clone / ".git" / "shallow").exists()
    log = RepoBuilder(clone).git("log", "--format=%s %P").splitlines()
    assert [line.split()[0] for line in log] == ["C3", "C2"]
    assert len(log[-1].split()) == 1  # the oldest commit shows no parent


def test_a_partial_clone(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("One", {"a": "old"})
    repo.commit("Two", {"a": "new"})
    clone = RepoBuilder(repo.partial_clone(tmp_path / "clone"))
    assert clone.git("config", "remote.origin.promisor").strip() == "true"
    missing = clone.git("rev-list", "--objects", "--all", "--missing=print")
    assert any(line.startswith("?") for line in missing.splitlines())


def test_partial_clone_settings_without_a_clone(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.mark_partial_clone("up")
    assert repo.git("config", "remote.up.promisor").strip() == "true"


def test_lfs_pointer() -> None:
    data = b"x" * 100
    oid = hashlib.sha256(data).hexdigest()
    assert lfs_pointer(data) == (
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize 100\n"
    )


def test_fast_import_errors_are_reported(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    with pytest.raises(RuntimeError, match="fast-import"):
        repo.commit("Bad", {"sub": Gitlink("not-a-sha")})


def test_the_path_shows_everything_committed(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    sha = repo.commit("One", {"a": "1"})
    assert (repo.path / ".git").is_dir()
    assert RepoBuilder(tmp_path / "repo").tip() == sha  # another reader sees the ref


def test_the_builder_is_a_path(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    sha = repo.commit("One", {"a": "1"})
    assert os.fspath(repo) == str(tmp_path / "repo")
    assert RepoBuilder(tmp_path / "repo").tip() == sha


def test_context_manager_finishes_the_history(tmp_path: Path) -> None:
    with RepoBuilder(tmp_path / "repo") as repo:
        sha = repo.commit("One", {"a": "1"})
    assert RepoBuilder(tmp_path / "repo").tip() == sha
    with pytest.raises(RuntimeError):
        repo.commit("Two", {"a": "2"})
