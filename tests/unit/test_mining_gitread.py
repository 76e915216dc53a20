"""The user's repository is only read, and its config cannot make our git calls run programs."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from harnessdrive.mining import gold_patch, hidden_test_contents, scan_history
from harnessdrive.testing.repo_builder import RepoBuilder

ALL = "2000-01-01"
OPS = "def add(a, b):\n    return a - b\n"
TEST = "from ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def build(path: Path) -> RepoBuilder:
    repo = RepoBuilder(path)
    repo.commit(
        "Initial",
        {
            "src/ops.py": OPS,
            "src/keep.py": "x = 1\n" * 20,
            ".gitattributes": "*.py diff=conv filter=trap\n",
        },
    )
    repo.commit(
        "Fix add",
        {"src/ops.py": OPS.replace("-", "+"), "tests/test_ops.py": TEST},
    )
    repo.commit(
        "Move keep",
        {"src/kept.py": "x = 1\n" * 20 + "y = 2\n", "tests/test_kept.py": TEST},
        delete=["src/keep.py"],
    )
    repo.checkout()
    return repo


def trap(folder: Path, name: str) -> str:
    """A program that leaves a marker file behind if anything runs it."""
    script = folder / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch '{folder / (name + '.ran')}'\ncat\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[RepoBuilder, Path]:
    traps = tmp_path / "traps"
    traps.mkdir()
    repo = build(tmp_path / "hostile")
    settings = {
        "diff.external": trap(traps, "external"),
        "diff.conv.textconv": trap(traps, "textconv"),
        "diff.conv.command": trap(traps, "driver"),
        "filter.trap.clean": trap(traps, "clean"),
        "filter.trap.smudge": trap(traps, "smudge"),
        "core.pager": trap(traps, "pager"),
        "pager.log": trap(traps, "pagerlog"),
        "pager.diff": trap(traps, "pagerdiff"),
        "core.fsmonitor": trap(traps, "fsmonitor"),
        "gpg.program": trap(traps, "gpg"),
        "log.showSignature": "true",
        "color.ui": "always",
        "color.diff": "always",
        "diff.noprefix": "true",
        "diff.mnemonicPrefix": "true",
        "diff.renames": "copies",
        "diff.submodule": "diff",
        "log.decorate": "full",
        "log.showRoot": "true",
        "core.quotepath": "true",
        "i18n.logOutputEncoding": "ISO-8859-1",
        "format.pretty": "oneline",
    }
    for key, value in settings.items():
        repo.git("config", key, value)
    return repo, traps


def test_repository_config_runs_nothing_and_changes_nothing(
    hostile: tuple[RepoBuilder, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, traps = hostile
    clean = scan_history(build(tmp_path / "clean").path, since=ALL)
    # The environment may point elsewhere too; none of it may redirect or reconfigure us.
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "clean" / ".git"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", trap(traps, "envdiff"))
    monkeypatch.setenv("GIT_PAGER", trap(traps, "envpager"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'diff.noprefix'='true'")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "diff.external")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", trap(traps, "envconfig"))

    scan = scan_history(repo.path, since=ALL)
    fix, move = scan.candidates[1], scan.candidates[0]
    patch = gold_patch(repo.path, fix)
    gold_patch(repo.path, move)
    hidden_test_contents(repo.path, fix)

    assert sorted(p.name for p in traps.glob("*.ran")) == []
    assert scan.counts == clean.counts
    assert [c.model_dump(exclude={"id"}) for c in scan.candidates] == [
        c.model_dump(exclude={"id"}) for c in clean.candidates
    ]
    assert patch.startswith(b"diff --git a/src/ops.py b/src/ops.py\n")
    assert b"\x1b[" not in patch  # no colour
    assert move.gold_files == ["src/keep.py", "src/kept.py"]  # no rename detection


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            info = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
            found[str(path.relative_to(root))] = (info.st_size, info.st_mtime_ns, digest)
    return found


def test_the_repository_is_only_read(tmp_path: Path) -> None:
    repo = build(tmp_path / "repo")
    repo.git("status", "--porcelain")  # let git settle its own index stat data first
    before = snapshot(repo.path)
    scan = scan_history(repo.path, since=ALL)
    for candidate in scan.candidates:
        gold_patch(repo.path, candidate)
        hidden_test_contents(repo.path, candidate)
    assert snapshot(repo.path) == before
