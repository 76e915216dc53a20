"""A task's files packed on the driver and unpacked on a worker, its paths moved there."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from harnessdrive.executors.task_bundle import pack_task, unpack_task
from harnessdrive.tasks.loading import load_task
from harnessdrive.testing.suites import TaskFiles, write_task


def test_a_task_unpacked_elsewhere_names_only_the_copy_and_keeps_its_links(
    tmp_path: Path,
) -> None:
    folder = write_task(
        tmp_path / "driver",
        TaskFiles(
            "add",
            files={"calc.py": "def add(a, b):\n    return a - b\n"},
            hidden={"tests/test_add.py": "from calc import add\n"},
            solution={"calc.py": "def add(a, b):\n    return a + b\n"},
        ),
    )
    os.symlink("calc.py", folder / "repo" / "alias.py")
    (folder / "repo" / "__pycache__").mkdir()
    (folder / "repo" / "__pycache__" / "calc.pyc").write_bytes(b"stale")
    task = load_task(folder)
    archive = pack_task(task)
    shutil.rmtree(tmp_path / "driver")  # the worker has no access to the driver's disk

    moved = unpack_task(task, archive, tmp_path / "worker")
    paths = [moved.folder, moved.repo_path, *(h.source for h in moved.hidden)]
    assert moved.solution is not None and moved.solution.overlay is not None
    paths.append(moved.solution.overlay)
    assert all(p.is_relative_to(tmp_path / "worker") and p.exists() for p in paths)
    assert (moved.repo_path / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert os.readlink(moved.repo_path / "alias.py") == "calc.py"
    assert not (moved.repo_path / "__pycache__").exists()
    assert [h.target for h in moved.hidden] == ["tests/test_add.py"]
    assert (moved.prompt, moved.fingerprint, moved.spec) == (
        task.prompt,
        task.fingerprint,
        task.spec,
    )
    # A second trial of the task on the same worker reuses the unpacked copy.
    (moved.repo_path / "calc.py").write_text("changed\n")
    again = unpack_task(task, archive, tmp_path / "worker")
    assert again.repo_path == moved.repo_path
    assert (again.repo_path / "calc.py").read_text() == "changed\n"
