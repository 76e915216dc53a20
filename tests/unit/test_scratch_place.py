"""Where scratch roots go: a memory file system only for known changes with room to spare."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.errors import UserError
from harnessdrive.sandbox.scratch import OWNER_FILE, make_scratch_root, sweep_stale_scratch
from harnessdrive.sandbox.scratch_place import (
    HEADROOM,
    MEMORY_FLOOR,
    MEMORY_FOLDER,
    SCRATCH_VARIABLE,
    is_memory_backed,
    memory_room,
    scratch_place,
)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Path]:
    """A folder of our own on the machine's memory file system."""
    folder = Path(tempfile.mkdtemp(prefix="scratch-place-", dir=MEMORY_FOLDER))
    yield folder
    for path in sorted(folder.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    folder.rmdir()


@pytest.fixture
def disk_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system temp dir on disk, as on this machine, with no TMPDIR or choice of the user."""
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.delenv(SCRATCH_VARIABLE, raising=False)
    assert not is_memory_backed(tmp_path), "these tests need a temp dir on disk"
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_the_mount_table_tells_memory_from_disk(tmp_path: Path) -> None:
    assert is_memory_backed(MEMORY_FOLDER)
    assert is_memory_backed(MEMORY_FOLDER / "not-there" / "below")
    assert not is_memory_backed(Path("/proc"))
    assert memory_room(Path("/proc")) is None


def test_known_changes_with_room_go_to_memory(memory: Path, disk_temp: Path) -> None:
    room = memory_room(memory)
    assert room is not None and room > MEMORY_FLOOR, "this machine's memory file system is full"
    fits = (room - MEMORY_FLOOR) // HEADROOM
    place = scratch_place(fits, memory=memory)
    assert place.folder == memory and is_memory_backed(place.folder)
    assert "memory file system" in place.why
    # Too big for the room, or an agent that could write anything: the system temp dir.
    assert scratch_place(fits + room, memory=memory).folder == disk_temp
    agent = scratch_place(None, memory=memory)
    assert agent.folder == disk_temp and "agents" in agent.why


def test_the_users_choice_wins(
    memory: Path, disk_temp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    monkeypatch.setenv(SCRATCH_VARIABLE, str(chosen))
    assert scratch_place(0, memory=memory).folder == chosen
    root = make_scratch_root(footprint=0)
    assert root.parent == chosen
    assert root not in sweep_stale_scratch() and root.is_dir()  # its owner (we) is alive
    monkeypatch.setenv(SCRATCH_VARIABLE, str(tmp_path / "missing"))
    with pytest.raises(UserError, match=f"{SCRATCH_VARIABLE}=.*missing is not a folder"):
        scratch_place(0, memory=memory)
    monkeypatch.delenv(SCRATCH_VARIABLE)
    monkeypatch.setenv("TMPDIR", str(disk_temp))
    place = scratch_place(0, memory=memory)
    assert place.folder == disk_temp and place.why == "TMPDIR names it"


def test_a_root_on_the_memory_file_system_is_swept_with_the_others(disk_temp: Path) -> None:
    # A run that kept its root in memory was killed; a later run on disk still sweeps it.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = MEMORY_FOLDER / f"harnessdrive-p{dead.pid}-sweeptest"
    left.mkdir()
    (left / OWNER_FILE).write_text(json.dumps({"pid": dead.pid, "started": 1.0}))
    assert left in sweep_stale_scratch()
    assert not left.exists()
