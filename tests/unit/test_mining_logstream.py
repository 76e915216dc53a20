from __future__ import annotations

from pathlib import Path

import psutil
import pytest

from harnessdrive.errors import UserError
from harnessdrive.mining.gitread import run_git, stream_git
from harnessdrive.mining.history import LOG_OPTIONS
from harnessdrive.mining.logstream import LoggedCommit, parse_log
from harnessdrive.testing.repo_builder import Executable, RepoBuilder, Symlink


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> RepoBuilder:
    repo = RepoBuilder(tmp_path_factory.mktemp("log") / "repo")
    repo.commit("Initial", {"a.py": "1\n2\n", "b": "x\n", "c.sh": "echo\n"})
    repo.commit("Type change", {"b": Symlink("a.py")})
    repo.commit("Mode change", {"c.sh": Executable("echo\n")})
    repo.commit("Binary and text", {"d.bin": b"\0\1\2", "a.py": "1\n3\n4\n"}, delete=["b"])
    repo.commit(b"\n\nodd \x00message?", {b"tab\there\nnew\xff": "t\n"})
    repo.commit("Empty", {})
    return repo


def output(repo: RepoBuilder) -> bytes:
    return run_git(repo.path, ["log", *LOG_OPTIONS, "HEAD", "--"])


def test_every_record_kind(repo: RepoBuilder) -> None:
    empty, odd, mixed, mode, typechange, initial = parse_log([output(repo)])
    assert empty.changes == ()
    assert initial.parents == () and initial.changes == ()  # root commits are not diffed
    [change] = typechange.changes
    assert (change.path, change.status, change.old_mode, change.new_mode) == (
        "b", "T", "100644", "120000",
    )  # fmt: skip
    [change] = mode.changes
    assert (change.status, change.new_mode, change.added, change.deleted) == (
        "M", "100755", 0, 0,
    )  # fmt: skip
    by_path = {c.path: c for c in mixed.changes}
    assert by_path["d.bin"].is_binary and by_path["d.bin"].lines == 0
    assert (by_path["a.py"].added, by_path["a.py"].deleted) == (2, 1)
    assert by_path["b"].status == "D" and set(by_path["b"].new_blob) == {"0"}
    [change] = odd.changes
    assert change.path == "tab\there\nnew\udcff"
    assert mixed.parents == (mode.sha,)


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 1 << 20])
def test_chunk_boundaries_do_not_matter(repo: RepoBuilder, size: int) -> None:
    data = output(repo)
    whole: list[LoggedCommit] = list(parse_log([data]))
    assert list(parse_log(chunked(data, size))) == whole
    assert len(whole) == 6


def test_streaming_matches_one_read(repo: RepoBuilder) -> None:
    streamed = list(parse_log(stream_git(repo.path, ["log", *LOG_OPTIONS, "HEAD", "--"])))
    assert streamed == list(parse_log([output(repo)]))


def test_a_consumer_that_stops_early_leaves_no_git_running(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    for i in range(300):
        repo.commit(f"C{i}", {"a.txt": f"{i}\n" * 200})
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    chunks = stream_git(repo.path, ["log", "-p", "HEAD"], chunk_size=16)
    next(chunks)
    chunks.close()
    after = {p.pid for p in psutil.Process().children(recursive=True)}
    assert after <= before


def test_a_failing_git_command_is_a_user_error(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("One", {"a": "1"})
    with pytest.raises(UserError, match="git log failed"):
        list(stream_git(repo.path, ["log", "no-such-revision"]))
