"""``show`` over every trial folder: each form of it (text, ``--json``, ``--atif``) either shows
the trial or refuses it in one line (exit 2); nothing else may come out of a stored trial."""

from __future__ import annotations

import contextlib
import io
import traceback
from collections.abc import Iterable
from pathlib import Path

from harnessdrive.cli.app import run_cli

FORMS = ((), ("--json",), ("--atif",))


def show_problems(folder: Path) -> list[str]:
    """What went wrong showing the trial in ``folder``, in every form (empty: nothing)."""
    problems = []
    for form in FORMS:
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = run_cli(["show", str(folder), *form])
        except BaseException:  # what the check is for: nothing may escape
            problems.append(f"{folder} {form}: {traceback.format_exc(limit=3)}")
            continue
        said = err.getvalue()
        if code not in (0, 2) or "Traceback" in said or (code == 2 and said.count("\n") > 1):
            problems.append(f"{folder} {form}: exit {code}: {said[:500]}")
    return problems


def trial_folders(root: Path) -> Iterable[Path]:
    """Every trial folder (one holding a ``result.json``) under ``root``."""
    for result in root.rglob("result.json"):
        if result.parent.name != "previous" and "previous" not in result.parent.parts:
            yield result.parent
