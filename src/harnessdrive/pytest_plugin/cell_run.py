"""Running one cell as a harnessdrive trial: a one-trial plan through the run driver, into this
session's results folder, under the session-wide spend cap.

Each pytest process (the controller, or one xdist worker) records into a results folder of its
own under the session's folder, because a results folder takes one driver at a time. The cap is
session-wide: before each cell the spend recorded in every folder of the session is summed, and
the cell may spend only what is left.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from harnessdrive.errors import UserError
from harnessdrive.pytest_plugin.matrix import Cell
from harnessdrive.sandbox.runner import Network, SandboxKind
from harnessdrive.sandbox.scratch import PREFIX
from harnessdrive.sandbox.scratch_place import MEMORY_FOLDER, scratch_place
from harnessdrive.store.store import Store

if TYPE_CHECKING:
    from harnessdrive.store.results import TrialResult
    from harnessdrive.tasks.loading import Suite


@dataclass(frozen=True)
class SessionSettings:
    session_folder: Path
    """Every results folder of this session lies directly inside."""
    worker: str
    """``main``, or the xdist worker id."""
    max_usd: float | None = None
    price_files: tuple[Path, ...] = ()
    sandbox: SandboxKind = "auto"
    network: Network = "host"
    agent_timeout: float | None = None

    @property
    def results(self) -> Path:
        return self.session_folder / self.worker


def session_spend(session_folder: Path) -> float:
    """What every cell of the session has counted against the cap so far."""
    total = 0.0
    if not session_folder.is_dir():
        return total
    for folder in sorted(p for p in session_folder.iterdir() if (p / "trials").is_dir()):
        store = Store(folder)
        try:
            store.sync_index()
            total += store.charged_total()
        finally:
            store.close()
    return total


@dataclass(frozen=True)
class CellRun:
    result: TrialResult
    folder: Path
    """The trial's folder in the results store."""
    workspace: Path | None
    """The agent's final workspace (kept until the case function has read it)."""
    capped: str | None = None
    """Why the cell did not run: the session's spend cap was reached."""
    scratch: tuple[Path, ...] = ()
    """The scratch roots this cell's run made (kept for the case, removed after it)."""


def run_cell(
    suite: Suite,
    cell: Cell,
    settings: SessionSettings,
    hide: tuple[Path, ...],
    timeout: float | None,
) -> CellRun:
    # The run driver (and all it pulls in) is imported only when a cell runs: a dry run or a
    # collect-only never needs it.
    from harnessdrive.running.plan import make_plan
    from harnessdrive.running.run import RunDriver, RunOptions

    plan = make_plan(suite, (cell.variant,), cell.repetition)
    # The plan adds a treated cell's control; only this cell's trial runs here.
    trials = [
        t
        for t in plan.trials
        if t.repetition == cell.repetition and t.variant.label == cell.variant.label
    ]
    plan = replace(plan, trials=tuple(trials))
    cap = settings.max_usd
    if cap is not None:
        own = _own_spend(settings.results)
        left = cap - session_spend(settings.session_folder)
        cap = own + left if left > 0 else None
        if cap is None:
            raise SpendCapReached(f"the session's spend cap of ${settings.max_usd:g} is reached")
    options = RunOptions(
        results=settings.results,
        keep=True,
        sandbox=settings.sandbox,
        network=settings.network,
        agent_timeout=timeout or settings.agent_timeout,
        max_usd=cap,
        price_files=settings.price_files,
        hide=hide,
    )
    before = own_scratch_roots()
    try:
        summary = RunDriver(plan, options).run()
    except BaseException:
        remove_roots(own_scratch_roots() - before)
        raise
    made = tuple(sorted(own_scratch_roots() - before))
    if not summary.trials:
        remove_roots(made)
        raise SpendCapReached("the run started no trial (the session's spend cap)")
    result = summary.trials[0]
    store = Store(settings.results)
    folder = store.trial_paths(result.trial_id).root
    store.close()
    workspace = Path(result.workspace) if result.workspace else None
    return CellRun(result=result, folder=folder, workspace=workspace, scratch=made)


class SpendCapReached(Exception):
    """Raised before a cell starts when the session has spent its cap."""


def _own_spend(results: Path) -> float:
    if not (results / "trials").is_dir():
        return 0.0
    store = Store(results)
    try:
        store.sync_index()
        return store.charged_total()
    finally:
        store.close()


def own_scratch_roots() -> set[Path]:
    """This process's scratch roots (``harnessdrive-p<pid>-...``, sandbox/scratch.py): the
    run is kept for the case function, so the roots it made are marked never to be swept."""
    folders = {Path(tempfile.gettempdir()), MEMORY_FOLDER}
    with contextlib.suppress(UserError):
        folders.add(scratch_place().folder)
    mark = f"{PREFIX}p{os.getpid()}-"
    found: set[Path] = set()
    for folder in folders:
        with contextlib.suppress(OSError):
            found.update(p for p in folder.iterdir() if p.name.startswith(mark) and p.is_dir())
    return found


def remove_roots(roots: Iterable[Path]) -> None:
    for root in roots:
        shutil.rmtree(root, ignore_errors=True)


def discard_workspace(run: CellRun) -> None:
    """The kept scratch of a cell, once the case has read it (the store keeps its diff),
    whichever way the cell ended."""
    remove_roots(run.scratch)
    if run.workspace is not None:
        scratch = run.workspace
        while scratch.parent != scratch and not scratch.name.startswith("harnessdrive-"):
            scratch = scratch.parent
        if scratch.name.startswith("harnessdrive-"):
            shutil.rmtree(scratch, ignore_errors=True)
