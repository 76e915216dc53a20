from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harnessdrive.errors import WorkspaceError
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.materialize import apply_changes, copy_snapshot
from harnessdrive.workspace.snapshot import build_snapshot


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def make_repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("VALUE = 1\n")
    (path / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (path / "run.sh").chmod(0o755)
    os.symlink("src/app.py", path / "link.py")
    (path / ".gitattributes").write_text("*.py text eol=crlf\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "first")
    (path / "src" / "app.py").write_text("VALUE = 2\n")
    (path / "later.txt").write_text("from a later commit\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "second: the fix")
    git(path, "branch", "feature")
    (path / ".env").write_text("SECRET=1\n")  # untracked
    return path


def test_git_snapshot_holds_only_the_commit_files_in_a_new_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    first = git(repo, "rev-parse", "HEAD~1")
    snap = build_snapshot(repo, first, tmp_path / "snap")
    root = snap.root
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".git" not in p.parts)
    assert files == [".gitattributes", "link.py", "run.sh", "src", "src/app.py"]
    assert (root / "src" / "app.py").read_bytes() == b"VALUE = 1\n"  # no eol filter applied
    assert os.readlink(root / "link.py") == "src/app.py"
    assert os.access(root / "run.sh", os.X_OK)
    # A brand-new repository: one commit, no later history, no branches, no hooks.
    assert git(root, "rev-list", "--all", "--count") == "1"
    assert git(root, "branch", "--format=%(refname:short)") == "main"
    assert not list((root / ".git").glob("hooks/*"))
    assert snap.source == f"git {repo}@{first}"
    # The user's repository is only read.
    assert git(repo, "status", "--porcelain") == "?? .env"


def test_same_content_gives_the_same_base_commit(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "a.py").write_text("A = 1\n")
    (folder / "pkg" / "__pycache__").mkdir()
    (folder / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    (folder / "node_modules" / "x").mkdir(parents=True)
    one = build_snapshot(folder, None, tmp_path / "one")
    two = build_snapshot(folder, None, tmp_path / "two")
    assert one.commit == two.commit
    assert not (one.root / "pkg" / "__pycache__").exists()
    assert not (one.root / "node_modules").exists()
    assert one.source == f"folder {folder}"


def test_submodules_are_left_out_and_lfs_pointers_copied_as_they_are(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "big.bin").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12345\n"
    )
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "-A")
    blob = "0123456789abcdef0123456789abcdef01234567"
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{blob},vendor/lib")
    git(repo, "commit", "-qm", "with a submodule")
    snap = build_snapshot(repo, None, tmp_path / "snap")
    assert not (snap.root / "vendor").exists()
    assert (snap.root / "big.bin").read_text().startswith("version https://git-lfs")


def test_partial_clone_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "extensions.partialClone", "origin")
    with pytest.raises(WorkspaceError, match="partial clone"):
        build_snapshot(repo, "HEAD", tmp_path / "snap")


def test_diff_survives_agent_commits_resets_and_a_deleted_git_folder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    snap = build_snapshot(repo, None, tmp_path / "snap")
    ws = copy_snapshot(snap, tmp_path / "ws")
    (ws / "src" / "app.py").write_text("VALUE = 3\n")
    (ws / "new.py").write_text("print('new')\n")
    (ws / "later.txt").unlink()
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "agent commit")
    git(ws, "commit", "--amend", "-qm", "rewritten")
    (ws / "__pycache__").mkdir()
    (ws / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (ws / "node_modules" / "dep").mkdir(parents=True)
    (ws / "node_modules" / "dep" / "index.js").write_text("x")
    (ws / "pkg.egg-info").mkdir()
    (ws / "pkg.egg-info" / "PKG-INFO").write_text("x")
    changes = capture_changes(snap, ws)
    kinds = {c.path: c.kind for c in changes.files}
    assert kinds == {"src/app.py": "modified", "new.py": "added", "later.txt": "deleted"}
    assert changes.lines_added == 2 and changes.lines_deleted == 2
    # Even with the agent's .git gone, the diff is the same.
    subprocess.run(["rm", "-rf", str(ws / ".git")], check=True)
    assert capture_changes(snap, ws).files == changes.files


def test_grading_copy_applies_changes_but_never_an_escaping_symlink(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    snap = build_snapshot(repo, None, tmp_path / "snap")
    ws = copy_snapshot(snap, tmp_path / "ws")
    (ws / "src" / "app.py").unlink()
    os.symlink("/etc/passwd", ws / "src" / "app.py")
    (ws / "run.sh").write_text("#!/bin/sh\necho changed\n")
    (ws / "later.txt").unlink()
    (ws / "later.txt").mkdir()
    (ws / "later.txt" / "inside.txt").write_text("file became a folder\n")
    changes = capture_changes(snap, ws)
    copy = copy_snapshot(snap, tmp_path / "grade")
    apply_changes(snap, copy, changes.files)
    assert not (copy / "src" / "app.py").exists() and not (copy / "src" / "app.py").is_symlink()
    assert (copy / "run.sh").read_text() == "#!/bin/sh\necho changed\n"
    assert os.access(copy / "run.sh", os.X_OK)
    assert (copy / "later.txt" / "inside.txt").read_text() == "file became a folder\n"


def test_a_failed_snapshot_build_leaves_nothing_behind(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with pytest.raises(WorkspaceError):
        build_snapshot(repo, "no-such-ref", tmp_path / "snap")
    assert not (tmp_path / "snap").exists()
    assert build_snapshot(repo, "HEAD", tmp_path / "snap").root.is_dir()


def test_a_git_snapshot_is_the_commits_own_tree_in_one_pack_with_a_clean_index(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    first = git(repo, "rev-parse", "HEAD~1")
    snap = build_snapshot(repo, first, tmp_path / "snap")
    assert snap.tree == git(repo, "rev-parse", f"{first}^{{tree}}")
    assert snap.files == 4
    packs = list((snap.root / ".git" / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 1
    # Only what the tree needs: the later commit's blob never reaches the snapshot.
    later = git(repo, "rev-parse", "HEAD:later.txt")
    missing = subprocess.run(["git", "cat-file", "-e", later], cwd=snap.root, capture_output=True)
    assert missing.returncode != 0
    assert git(snap.root, "status", "--porcelain") == ""
    assert git(snap.root, "ls-files", "-s", "run.sh").startswith("100755 ")


def test_a_snapshot_of_a_subfolder_holds_that_folder_only(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    snap = build_snapshot(repo / "src", "HEAD", tmp_path / "snap")
    assert sorted(p.name for p in snap.root.iterdir() if p.name != ".git") == ["app.py"]
    assert snap.tree == git(repo, "rev-parse", "HEAD:src")
    assert (snap.root / "app.py").read_text() == "VALUE = 2\n"


def test_a_sha256_repository_gives_a_snapshot_of_its_files(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "--object-format=sha256")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    snap = build_snapshot(repo, None, tmp_path / "snap")
    assert (snap.root / "a.txt").read_text() == "a\n"
    assert snap.files == 1
    assert git(snap.root, "status", "--porcelain") == ""


@pytest.mark.parametrize("with_submodule", [False, True])
def test_a_crafted_tree_never_writes_through_its_own_link(
    tmp_path: Path, with_submodule: bool
) -> None:
    """A link ``lib`` to a folder outside, beside a folder ``lib`` holding a file: no index
    allows it, but a crafted tree can. A submodule sends it the file-by-file way."""
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")

    def blob(data: str) -> str:
        done = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=data,
                              capture_output=True, text=True, check=True)  # fmt: skip
        return done.stdout.strip()

    def tree(entries: str) -> str:
        done = subprocess.run(["git", "mktree", "--missing"], cwd=repo, input=entries,
                              capture_output=True, text=True, check=True)  # fmt: skip
        return done.stdout.strip()

    payload = blob("planted\n")
    inner = tree(f"100644 blob {payload}\tevil\n")
    entries = f"120000 blob {blob(str(outside))}\tlib\n040000 tree {inner}\tlib\n"
    entries += f"100644 blob {payload}\tok.txt\n"
    if with_submodule:
        entries += "160000 commit 0123456789abcdef0123456789abcdef01234567\tvendor\n"
    commit = git(repo, "commit-tree", tree(entries), "-m", "crafted")
    build_snapshot(repo, commit, tmp_path / "snap")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("with_submodule", [False, True])
def test_a_crafted_tree_entry_inside_git_is_refused(tmp_path: Path, with_submodule: bool) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")

    def run(args: list[str], data: str) -> str:
        done = subprocess.run(["git", *args], cwd=repo, input=data, capture_output=True,
                              text=True, check=True)  # fmt: skip
        return done.stdout.strip()

    hook = run(["hash-object", "-w", "--stdin"], "#!/bin/sh\necho planted\n")
    hooks = run(["mktree"], f"100755 blob {hook}\tpost-checkout\n")
    planted = run(["mktree"], f"040000 tree {hooks}\thooks\n")
    entries = f"040000 tree {planted}\t.GIT\n"
    if with_submodule:
        entries += "160000 commit 0123456789abcdef0123456789abcdef01234567\tvendor\n"
    commit = git(repo, "commit-tree", run(["mktree", "--missing"], entries), "-m", "crafted")
    with pytest.raises(WorkspaceError):
        build_snapshot(repo, commit, tmp_path / "snap")
    assert not (tmp_path / "snap").exists()
