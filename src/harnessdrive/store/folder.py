"""Which folders may serve as a results folder: checked before anything is read or written.

A run never writes into a file or into a folder under a file; a reader never mistakes another
folder for results, nor leaves an index behind in it.
"""

from __future__ import annotations

from pathlib import Path

from harnessdrive.errors import Setting, UserError
from harnessdrive.store.paths import ResultsPaths


def is_results_folder(root: Path) -> bool:
    paths = ResultsPaths(root)
    return paths.trials.is_dir() or paths.runs.is_dir() or paths.index.is_file()


def check_for_writing(root: Path) -> None:
    """Refuse a results folder a run cannot or should not write into."""
    for folder in (root, *root.parents):
        if folder.exists() and not folder.is_dir():
            what = "is a file" if folder == root else f"lies under a file, {folder}"
            raise UserError(
                f"results folder {root} {what}: name a folder", settings=(Setting("results"),)
            )
        if folder.exists():
            break


def check_for_reading(root: Path) -> None:
    """Refuse anything but an existing results folder."""
    if not root.exists():
        raise UserError(f"no results folder at {root}")
    if not root.is_dir():
        raise UserError(f"{root} is a file, not a results folder")
    if not is_results_folder(root):
        raise UserError(f"{root} is not a results folder (no trials/, runs/ or index.sqlite)")
