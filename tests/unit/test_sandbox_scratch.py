"""Scratch roots of dead drivers are swept; nothing else is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil

from harnessdrive.sandbox.scratch import (
    OWNER_FILE,
    keep_scratch_root,
    make_scratch_root,
    owner_is_gone,
    sweep_stale_scratch,
)


def dead_owner() -> dict[str, float]:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    started = psutil.Process(child.pid).create_time()
    child.wait()
    return {"pid": child.pid, "started": started}


def make_root(parent: Path, name: str, owner: dict[str, object] | None) -> Path:
    root = parent / name
    (root / "trial-1" / "workspace").mkdir(parents=True)
    if owner is not None:
        (root / OWNER_FILE).write_text(json.dumps(owner))
    return root


def test_a_root_of_a_dead_driver_is_removed_with_its_processes(tmp_path: Path) -> None:
    root = make_root(tmp_path, "harnessdrive-dead", dead_owner())
    workspace = root / "trial-1" / "workspace"
    # An agent of a killed `--sandbox none` run, still working in its workspace.
    straggler = subprocess.Popen(["sleep", "300"], cwd=workspace)
    assert owner_is_gone(root)
    assert sweep_stale_scratch(tmp_path) == [root]
    assert not root.exists()
    assert straggler.wait(timeout=10) != 0


def test_live_kept_foreign_and_unmarked_folders_stay(tmp_path: Path) -> None:
    me = psutil.Process()
    live = make_root(tmp_path, "harnessdrive-live", {"pid": me.pid, "started": me.create_time()})
    kept = make_root(tmp_path, "harnessdrive-kept", {**dead_owner(), "kept": True})
    unmarked = make_root(tmp_path, "harnessdrive-unmarked", None)
    other = make_root(tmp_path, "someone-else", dead_owner())
    reused = make_root(tmp_path, "harnessdrive-reused", {"pid": me.pid, "started": 1.0})
    assert sweep_stale_scratch(tmp_path) == [reused]  # a reused pid is not the owner
    for folder in (live, kept, unmarked, other):
        assert folder.is_dir()


def test_our_roots_carry_an_owner_record_and_can_be_kept(tmp_path: Path) -> None:
    root = make_scratch_root()
    try:
        owner = json.loads((root / OWNER_FILE).read_text())
        assert owner["pid"] == psutil.Process().pid and owner["kept"] is False
        assert root.name.startswith("harnessdrive-")
        assert not owner_is_gone(root)
        keep_scratch_root(root)
        assert json.loads((root / OWNER_FILE).read_text())["kept"] is True
    finally:
        for path in sorted(root.rglob("*"), reverse=True):
            path.unlink()
        root.rmdir()


MAKE_ROOT = "from harnessdrive.sandbox.scratch import make_scratch_root; print(make_scratch_root())"


def test_a_root_whose_driver_died_before_writing_its_record_is_swept(tmp_path: Path) -> None:
    # kill -9 can land between making the folder and writing the record in it (or halfway
    # through the write): the folder's name says whose it is.
    made = subprocess.run(
        [sys.executable, "-c", MAKE_ROOT],
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    no_record = Path(made.stdout.strip())
    (no_record / OWNER_FILE).unlink()
    half = Path(str(no_record) + "x")  # the same owner, a record cut short
    half.mkdir()
    (half / OWNER_FILE).write_text('{"pid": ')
    assert no_record.parent == tmp_path and owner_is_gone(no_record) and owner_is_gone(half)
    assert sorted(sweep_stale_scratch(tmp_path)) == sorted([no_record, half])
    mine = make_scratch_root()  # this process's, without a record: still alive, so it stays
    try:
        (mine / OWNER_FILE).unlink()
        assert not owner_is_gone(mine)
    finally:
        mine.rmdir()
