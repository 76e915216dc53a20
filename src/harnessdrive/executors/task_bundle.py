"""A task's files as one archive, so a worker without the driver's disk can build its workspace.

The driver packs every folder and file a :class:`Task` names (its folder, repository, hidden
files, solution, shared folders) into a tar archive once per task; an executor that runs
elsewhere ships the bytes (Ray puts them in its object store). The worker unpacks them once
into its scratch root and runs a copy of the task whose paths point there. Links inside the
repository travel as links; nothing in an archive may point outside the folder it unpacks in.
"""

from __future__ import annotations

import dataclasses
import io
import tarfile
from pathlib import Path

from harnessdrive.errors import WorkspaceError
from harnessdrive.tasks.loading import HiddenSource, Solution, Task

MANIFEST = ".harnessdrive-roots"
"""The archive's own list of the driver's paths, one a line, in the order of their members."""


def _roots(task: Task) -> list[Path]:
    """The fewest paths whose trees hold every path the task names."""
    named: list[Path] = [task.folder, task.repo_path, *task.shared]
    named += [h.source for h in task.hidden]
    if task.solution is not None:
        named += [p for p in (task.solution.patch, task.solution.overlay) if p is not None]
    roots: list[Path] = []
    for path in sorted(dict.fromkeys(named), key=lambda p: len(p.parts)):
        if not any(path == root or path.is_relative_to(root) for root in roots):
            roots.append(path)
    return roots


def pack_task(task: Task) -> bytes:
    """The task's files, as a tar archive."""
    roots = _roots(task)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        listing = "\n".join(str(root) for root in roots).encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(listing)
        archive.addfile(info, io.BytesIO(listing))
        for number, root in enumerate(roots):
            archive.add(root, arcname=str(number), filter=_drop_caches)
    return buffer.getvalue()


def unpack_task(task: Task, archive: bytes, into: Path) -> Task:
    """Unpack ``archive`` (from :func:`pack_task` of ``task``) into ``into`` and return the task
    with its paths there. Unpacking again into the same folder reuses what is there."""
    done = into / ".unpacked"
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r") as opened:
        member = opened.extractfile(MANIFEST)
        if member is None:
            raise WorkspaceError("a task archive without its list of paths")
        roots = [Path(line) for line in member.read().decode().splitlines()]
        if not done.exists():
            into.mkdir(parents=True, exist_ok=True)
            # The user's own task: its links are kept as they are ("tar", not "data").
            opened.extractall(into, filter="tar")
            done.touch()
    return _moved(task, {root: into / str(n) for n, root in enumerate(roots)})


def _moved(task: Task, places: dict[Path, Path]) -> Task:
    def moved(path: Path) -> Path:
        for root, place in places.items():
            if path == root or path.is_relative_to(root):
                return place / path.relative_to(root)
        raise WorkspaceError(f"task {task.id}: {path} is not in its archive")

    solution = task.solution
    if solution is not None:
        solution = Solution(
            patch=moved(solution.patch) if solution.patch else None,
            overlay=moved(solution.overlay) if solution.overlay else None,
        )
    return dataclasses.replace(
        task,
        folder=moved(task.folder),
        repo_path=moved(task.repo_path),
        hidden=tuple(HiddenSource(moved(h.source), h.target) for h in task.hidden),
        solution=solution,
        shared=tuple(moved(p) for p in task.shared),
        fixtures=(),  # self-test changes never reach a trial
    )


def _drop_caches(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if "__pycache__" in Path(info.name).parts else info
