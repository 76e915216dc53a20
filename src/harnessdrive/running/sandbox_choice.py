"""Which sandbox a run gets, and what it may not see: decided once, before anything runs.

The sandbox ``auto`` is bubblewrap where it works. Where it does not, only the built-in scripted
agents (our own code, which edits the workspace in-process) may run without one; a real agent
CLI or a ``command`` template runs someone else's code, so the run is refused with the fix.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from harnessdrive.errors import Setting, UserError
from harnessdrive.harnesses.base import Harness
from harnessdrive.harnesses.cli.template_paths import show_option
from harnessdrive.sandbox.mounts import is_inside
from harnessdrive.sandbox.runner import SandboxKind, sandbox_problem
from harnessdrive.sandbox.sealed import registered_results_folders
from harnessdrive.tasks.improve_files import improve_sources
from harnessdrive.tasks.loading import Suite
from harnessdrive.tasks.models import VariantSpec

INSTALL_BUBBLEWRAP = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
_SHOW = Setting("show")


def runs_foreign_code(harness: Harness) -> bool:
    """False only for harnesses that say so (the built-in scripted agents)."""
    return bool(getattr(harness, "runs_foreign_code", True))


def refuse_unsandboxed(kind: SandboxKind, harnesses: Mapping[str, Harness]) -> None:
    """Raise :class:`UserError` when ``auto`` would run agent code with no sandbox."""
    if kind != "auto":
        return
    foreign = sorted(name for name, harness in harnesses.items() if runs_foreign_code(harness))
    if not foreign:
        return
    problem = sandbox_problem()
    if problem is None:
        return
    raise UserError(
        f"sandbox auto: {problem}, so {', '.join(foreign)} would run unprotected (able to read "
        f"the hidden tests and your files); {INSTALL_BUBBLEWRAP}, or choose the sandbox none to "
        "run without one",
        settings=(Setting("sandbox", "none"),),
    )


def secret_paths(suite: Suite, results: Path, scratch_root: Path) -> list[Path]:
    """What no sandboxed process may see, even inside a folder it is shown."""
    paths = [results, suite.folder, scratch_root]
    for task in suite.tasks:
        paths += [task.folder, task.repo_path]
        paths += [hidden.source for hidden in task.hidden]
        paths += improve_sources(task.folder, task.spec)  # the objective's files, the overlays
        if task.solution is not None:
            paths += [p for p in (task.solution.patch, task.solution.overlay) if p is not None]
    return paths


def private_paths() -> list[Path]:
    """Covered like the secrets, but tool folders inside them are shown again."""
    paths: list[Path] = []
    with contextlib.suppress(OSError):
        paths.append(Path.cwd())  # most likely the user's repository
    home = os.environ.get("HOME")
    if home:
        paths.append(Path(home))
    return paths


def describe_auto() -> str:
    """What the sandbox ``auto`` does here, for ``doctor``."""
    problem = sandbox_problem()
    if problem is None:
        return "bubblewrap, for every harness"
    return (
        f"auto refuses real agent CLIs and command templates ({problem}): {INSTALL_BUBBLEWRAP}, "
        "or choose the sandbox none to run them unprotected; the built-in scripted agents "
        "(the demo) still run, without a sandbox"
    )


def checked_shows(
    shown: Sequence[Path], variants: Sequence[VariantSpec], suite: Suite, results: Path
) -> tuple[Path, ...]:
    """Paths shown to every sandbox, made absolute, after checking them and every variant's
    ``show``.

    A path that is, holds or lies inside the results folder (or any other known results
    folder), the suite, a task, a repository or a hidden file is refused, and so are ``/`` and
    any folder that holds the whole HOME.
    """
    own: list[Path] = []
    for path in shown:
        full = Path(os.path.expanduser(path)).absolute()
        if not full.exists():
            raise UserError(f"shown path {path}: no such file or folder", settings=(_SHOW,))
        own.append(full)
    named: list[tuple[str, Path, tuple[Setting, ...]]] = [
        (f"shown path {p}", p, (_SHOW,)) for p in own
    ]
    for variant in variants:
        named += [
            (f"variant {variant.label}: show {p}", p, ())
            for p in show_option(variant.options.get("show"), variant.label)
        ]
    secrets = [*secret_paths(suite, results, results), *map(Path, registered_results_folders())]
    secret_texts = [os.path.realpath(p) for p in secrets]
    home = os.path.realpath(os.path.expanduser("~"))
    for what, path, settings in named:
        real = os.path.realpath(path)
        if real == "/" or is_inside(home, real):
            raise UserError(
                f"{what}: would show the whole HOME or system; name a folder inside",
                settings=settings,
            )
        for secret in secret_texts:
            if is_inside(real, secret) or is_inside(secret, real):
                raise UserError(
                    f"{what}: would show {secret} (the results, the suite, a repository or the "
                    "hidden files) to the agent; name another folder",
                    settings=settings,
                )
    return tuple(own)
