"""Results are flushed to disk in the background: every file handed over is on disk once
closed, and one moved away meanwhile stops nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harnessdrive.store.atomic import write_atomic
from harnessdrive.store.flush import BackgroundFlush


def test_close_waits_until_every_file_and_its_folder_is_flushed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[tuple[int, int]] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        flushed.append((info.st_dev, info.st_ino))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    files = [tmp_path / "a" / "result.json", tmp_path / "b" / "result.json"]
    for file in files:
        write_atomic(file, "{}\n", durable=False)
    assert flushed == []  # not durable: nothing waited for the disk while writing
    gone = tmp_path / "c" / "result.json"
    flush = BackgroundFlush()
    flush.add(files[0])
    flush.add(gone)  # moved away before its turn: skipped, never an error
    flush.add(files[1])
    flush.close()
    identities = {(p.stat().st_dev, p.stat().st_ino) for p in [*files, *(f.parent for f in files)]}
    assert identities <= set(flushed)
    assert all(file.read_text() == "{}\n" for file in files)
