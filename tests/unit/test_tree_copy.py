"""The snapshot copier: the same tree as the source, links kept as links, odd entries refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from harnessdrive.errors import WorkspaceError
from harnessdrive.workspace.tree_copy import copy_tree


def _entries(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry below ``root``: kind, mode, modification time and content or link target."""
    found: dict[str, tuple[object, ...]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        rel = path.relative_to(root).as_posix()
        if stat.S_ISLNK(info.st_mode):
            found[rel] = ("link", os.readlink(path), info.st_mtime_ns)
        elif stat.S_ISDIR(info.st_mode):
            found[rel] = ("dir", stat.S_IMODE(info.st_mode), info.st_mtime_ns)
        else:
            found[rel] = ("file", stat.S_IMODE(info.st_mode), info.st_mtime_ns, path.read_bytes())
    return found


def test_copy_keeps_content_modes_times_and_links(tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / "pkg" / "deep").mkdir(parents=True)
    (source / "pkg" / "mod.py").write_text("X = 1\n")
    (source / "empty").write_bytes(b"")
    big = os.urandom(3 * 1024 * 1024 + 7)  # more than one chunk of the kernel copy
    (source / "pkg" / "deep" / "blob.bin").write_bytes(big)
    script = source / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    (source / "inside").symlink_to("pkg/mod.py")
    (source / "outside").symlink_to("/etc/passwd")  # copied as a link, never read
    (source / "dangling").symlink_to("missing")
    (source / "pkg" / "deep").chmod(0o555)  # read-only folder: filled before its mode is set
    for path in [*source.rglob("*"), source]:
        os.utime(path, ns=(1_000_000_000, 1_500_000_000_123), follow_symlinks=False)
    try:
        copy_tree(source, tmp_path / "copy")
        copied = tmp_path / "copy"
        assert _entries(copied) == _entries(source)
        assert stat.S_IMODE(copied.stat().st_mode) == stat.S_IMODE(source.stat().st_mode)
        assert copied.stat().st_mtime_ns == 1_500_000_000_123
        assert (copied / "outside").is_symlink()
        # The copy is its own: writing it leaves the source alone.
        (copied / "pkg" / "mod.py").write_text("X = 2\n")
        assert (source / "pkg" / "mod.py").read_text() == "X = 1\n"
    finally:
        (source / "pkg" / "deep").chmod(0o755)
        if (tmp_path / "copy" / "pkg" / "deep").exists():
            (tmp_path / "copy" / "pkg" / "deep").chmod(0o755)


def test_special_files_and_an_existing_target_are_refused(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    os.mkfifo(source / "pipe")
    with pytest.raises(WorkspaceError, match="not a file, folder or link"):
        copy_tree(source, tmp_path / "copy")
    (source / "pipe").unlink()
    (tmp_path / "taken").mkdir()
    with pytest.raises(FileExistsError):
        copy_tree(source, tmp_path / "taken")
