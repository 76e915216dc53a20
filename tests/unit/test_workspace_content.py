"""Whatever the agent leaves in its workspace, the trial is graded: nothing it leaves can stop
the diff or the grading copy. What cannot be part of a change is left out with a reason."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.verdict import Verdict
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.tasks import load_task
from harnessdrive.testing.suites import write_task
from harnessdrive.workspace.changes import GITLINK_MODE, FileChange, capture_changes
from harnessdrive.workspace.materialize import apply_changes, copy_snapshot
from harnessdrive.workspace.scan import LeftOut
from harnessdrive.workspace.snapshot import build_snapshot
from tests.conftest import ADD_FIXED, add_task

Make = Callable[[Path], None]


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@a"}
    env |= {"GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@a"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def fifo(ws: Path) -> None:
    os.mkfifo(ws / "pipe")


def unix_socket(ws: Path) -> None:
    with _inside(ws):  # a socket path must be short
        server = socket.socket(socket.AF_UNIX)
        server.bind("sock")
        server.close()


def device(ws: Path) -> None:
    try:
        os.mknod(ws / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD")


def sparse_2gb(ws: Path) -> None:
    with open(ws / "huge.bin", "wb") as handle:
        handle.truncate(2 * 1024**3)


def nested_repo_without_commit(ws: Path) -> None:
    (ws / "vendor" / "empty").mkdir(parents=True)
    _git(ws / "vendor" / "empty", "init", "-q")
    (ws / "vendor" / "empty" / "conftest.py").write_text("raise SystemExit(0)\n")


def nested_clone(ws: Path) -> None:
    origin = ws.parent / "origin"
    origin.mkdir()
    _git(origin, "init", "-q")
    (origin / "lib.py").write_text("X = 1\n")
    (origin / "conftest.py").write_text("raise SystemExit(0)\n")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-qm", "dep")
    _git(ws, "clone", "-q", str(origin), "deps/lib")


def gitfile(ws: Path) -> None:
    (ws / "sub").mkdir()
    (ws / "sub" / ".git").write_text("gitdir: ../../elsewhere.git\n")
    (ws / "sub" / "code.py").write_text("X = 2\n")


def git_symlink(ws: Path) -> None:
    (ws / "linked").mkdir()
    os.symlink("../.git", ws / "linked" / ".git")


def symlinks(ws: Path) -> None:
    os.symlink("missing/target", ws / "dangling")
    os.symlink("loop-b", ws / "loop-a")
    os.symlink("loop-a", ws / "loop-b")
    os.symlink(".git/config", ws / "to-own-git")
    os.symlink("calc.py", ws / "alias.py")


def symlink_out(ws: Path) -> None:
    os.symlink("/etc/passwd", ws / "passwd")


def hard_links(ws: Path) -> None:
    outside = ws.parent / "outside.txt"
    outside.write_text("outside\n")
    os.link(ws / "calc.py", ws / "hard.py")
    os.link(outside, ws / "hard-outside.txt")


def mode_000_file(ws: Path) -> None:
    (ws / "locked.txt").write_text("secret\n")
    (ws / "locked.txt").chmod(0)


def mode_000_folder(ws: Path) -> None:
    (ws / "closed").mkdir()
    (ws / "closed" / "inner.txt").write_text("x\n")
    (ws / "closed").chmod(0)


def folder_without_x(ws: Path) -> None:
    (ws / "noexec").mkdir()
    (ws / "noexec" / "inner.txt").write_text("x\n")
    (ws / "noexec").chmod(0o600)


def tracked_file_becomes_fifo(ws: Path) -> None:
    (ws / "tests" / "test_visible.py").unlink()
    os.mkfifo(ws / "tests" / "test_visible.py")


ROOT = os.geteuid() == 0
# (make, expected outcome with a right fix, what is left out: (path, code) pairs)
CASES: dict[str, tuple[Make, str, set[tuple[str, str]]]] = {
    "fifo": (fifo, "pass", {("pipe", "special-file")}),
    "socket": (unix_socket, "pass", {("sock", "special-file")}),
    "device": (device, "pass", {("null", "special-file")}),
    "sparse-2gb": (sparse_2gb, "pass", {("huge.bin", "oversized-file")}),
    "nested-repo-without-commit": (
        nested_repo_without_commit,
        "pass",
        {("vendor/empty", "nested-repository")},
    ),
    "nested-clone": (nested_clone, "pass", {("deps/lib", "nested-repository")}),
    "gitfile": (gitfile, "pass", {("sub", "nested-repository")}),
    "git-symlink": (git_symlink, "pass", {("linked", "nested-repository")}),
    "symlinks": (symlinks, "pass", set()),
    "symlink-out": (symlink_out, "tampered", set()),
    "hard-links": (hard_links, "pass", set()),
    # root reads anything, so these are carried as ordinary files there
    "mode-000-file": (mode_000_file, "pass", set() if ROOT else {("locked.txt", "unreadable")}),
    "mode-000-folder": (
        mode_000_folder,
        "pass",
        set() if ROOT else {("closed", "unreadable")},
    ),
    "folder-without-x": (
        folder_without_x,
        "pass",
        set() if ROOT else {("noexec", "unreadable")},
    ),
    "tracked-file-becomes-fifo": (
        tracked_file_becomes_fifo,
        "pass",
        {("tests/test_visible.py", "special-file")},
    ),
}


def _grade(tmp_path: Path, make: Make, *, fix: bool) -> tuple[Verdict, tuple[LeftOut, ...]]:
    task = load_task(write_task(tmp_path / "tasks", add_task()))
    snap = build_snapshot(task.repo_path, None, tmp_path / "snap")
    ws = copy_snapshot(snap, tmp_path / "ws")
    if fix:
        (ws / "calc.py").write_text(ADD_FIXED)
    make(ws)
    changes = capture_changes(snap, ws)
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(
        task=task,
        snapshot=snap,
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        sandbox=get_sandbox("none"),
        python=sys.executable,
    )
    try:
        return grade(setup, changes), changes.left_out
    finally:
        for folder in (ws, tmp_path / "scratch"):
            for dirpath, dirnames, _ in os.walk(folder):
                for name in dirnames:
                    with contextlib.suppress(OSError):
                        os.chmod(os.path.join(dirpath, name), 0o755)


@pytest.mark.parametrize("case", sorted(CASES))
def test_whatever_the_agent_leaves_the_trial_is_graded(tmp_path: Path, case: str) -> None:
    make, expected, left_out = CASES[case]
    verdict, found = _grade(tmp_path, make, fix=True)
    assert {(item.path, item.code) for item in found} == left_out
    assert verdict.outcome == expected, verdict
    if expected == "tampered":
        assert [f.code for f in verdict.findings] == ["symlink-escape"]


@pytest.mark.parametrize("case", ["sparse-2gb", "nested-clone", "fifo"])
def test_a_wrong_fix_beside_such_content_still_fails(tmp_path: Path, case: str) -> None:
    verdict, _ = _grade(tmp_path, CASES[case][0], fix=False)
    assert verdict.outcome == "fail"
    assert verdict.hidden is not None and verdict.hidden.total > 0


def test_a_nested_repository_hides_nothing_in_the_grading_copy(tmp_path: Path) -> None:
    """Its files are another project's: not carried, so a forcing conftest inside does nothing."""
    task = load_task(write_task(tmp_path / "tasks", add_task()))
    snap = build_snapshot(task.repo_path, None, tmp_path / "snap")
    ws = copy_snapshot(snap, tmp_path / "ws")
    nested_clone(ws)
    changes = capture_changes(snap, ws)
    assert [c.path for c in changes.files] == []
    copy = copy_snapshot(snap, tmp_path / "copy")
    apply_changes(snap, copy, changes.files)
    assert not (copy / "deps").exists()


def test_a_gitlink_in_a_change_is_never_written_and_never_read(tmp_path: Path) -> None:
    task = load_task(write_task(tmp_path / "tasks", add_task()))
    snap = build_snapshot(task.repo_path, None, tmp_path / "snap")
    copy = copy_snapshot(snap, tmp_path / "copy")
    link = FileChange(
        path="vendor/dep",
        kind="added",
        old_mode=None,
        new_mode=GITLINK_MODE,
        new_blob="1" * 40,  # a commit of another repository: not in ours
        added_lines=0,
        deleted_lines=0,
        binary=False,
    )
    apply_changes(snap, copy, [link])
    assert not (copy / "vendor").exists()


def test_the_size_limit_is_the_tasks_own(tmp_path: Path) -> None:
    task = load_task(write_task(tmp_path / "tasks", add_task()))
    snap = build_snapshot(task.repo_path, None, tmp_path / "snap")
    ws = copy_snapshot(snap, tmp_path / "ws")
    (ws / "data.bin").write_bytes(b"\0" * 2048)
    assert [i.code for i in capture_changes(snap, ws, max_file_bytes=1024).left_out] == [
        "oversized-file"
    ]
    assert capture_changes(snap, ws, max_file_bytes=4096).paths == ("data.bin",)


def test_an_untouched_oversized_file_of_the_base_is_no_change_and_no_entry(
    tmp_path: Path,
) -> None:
    task = load_task(write_task(tmp_path / "tasks", add_task(files={"data.bin": "x" * 2048})))
    snap = build_snapshot(task.repo_path, None, tmp_path / "snap")
    ws = copy_snapshot(snap, tmp_path / "ws")
    untouched = capture_changes(snap, ws, max_file_bytes=1024)
    assert (untouched.files, untouched.left_out) == ((), ())
    (ws / "data.bin").write_text("y" * 2048)
    os.utime(ws / "data.bin", ns=(1, 1))
    touched = capture_changes(snap, ws, max_file_bytes=1024)
    assert touched.files == ()  # left out: the base's version stays in the grading copy
    assert [(i.path, i.code) for i in touched.left_out] == [("data.bin", "oversized-file")]
