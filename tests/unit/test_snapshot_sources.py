"""Task sources are checked once, before a run: good refs pass, bad ones are named."""

from __future__ import annotations

import subprocess
from pathlib import Path

from harnessdrive.workspace.snapshot import unreadable_sources


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_resolvable_refs_pass_and_each_bad_one_is_named(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "f.py").write_text("x = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    git(repo, "tag", "v1")
    plain = tmp_path / "plain"
    plain.mkdir()
    sources = [(repo, None), (repo, "v1"), (repo, "HEAD~0"), (plain, None)]
    assert unreadable_sources(sources) == {}
    bad = [(repo, "v2"), (repo, "v1"), (repo, "a\nb"), (plain, "main")]
    assert unreadable_sources(bad) == {
        (repo, "v2"): f"'v2' names no commit in {repo}",
        (repo, "a\nb"): "not a usable ref: 'a\\nb'",
        (plain, "main"): f"not a git repository: {plain}",
    }
