"""Paths a ``command`` template names that the sandbox does not show, and the ``show`` option.

A template that runs a script kept under /tmp fails inside bubblewrap (each sandbox has a /tmp
of its own), and so does one that names ``~/...`` (HOME there is the trial's private one). The
shell then says "No such file or directory", which reads like a missing program; this module
finds the real cause by asking the sandbox itself which of the template's paths it can see.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harnessdrive.errors import UserError
from harnessdrive.sandbox.runner import Isolation, Sandbox


def named_paths(template: str) -> list[tuple[str, Path]]:
    """``(as written, on this machine)`` for each absolute or ``~`` path in the template."""
    try:
        words = shlex.split(template, comments=True)
    except ValueError:
        words = template.split()
    found: dict[str, Path] = {}
    for word in words:
        for part in (word, word.partition("=")[2]):
            if part.startswith("/") or part.startswith("~/") or part == "~":
                found.setdefault(part, Path(os.path.expanduser(part)))
    return list(found.items())


def unseen_paths(
    template: str,
    sandbox: Sandbox,
    *,
    cwd: Path,
    env: Mapping[str, str],
    isolation: Isolation,
    scratch: Path,
) -> list[tuple[str, Path]]:
    """The template's paths that exist here but not inside ``sandbox``, as the sandbox sees it."""
    named = [(text, path) for text, path in named_paths(template) if os.path.lexists(path)]
    if not named:
        return []
    report = scratch / ".harnessdrive-unseen"
    script = 'for p in "$@"; do [ -e "$p" ] || [ -L "$p" ] || printf "%s\\n" "$p"; done'
    argv = ["/bin/sh", "-c", script, "sh", *(str(path) for _text, path in named)]
    result = sandbox.run(
        argv,
        cwd=cwd,
        env={"PATH": os.defpath, "HOME": env.get("HOME", str(scratch)), "LANG": "C.UTF-8"},
        timeout=30,
        stdout=report,
        stderr=report.with_suffix(".err"),
        isolation=Isolation(
            writable=isolation.writable, readonly=isolation.readonly, tools=isolation.tools
        ),
    )
    try:
        missing = set(report.read_text(errors="replace").splitlines()) if result.ok else set()
    finally:
        report.unlink(missing_ok=True)
        report.with_suffix(".err").unlink(missing_ok=True)
    return [(text, path) for text, path in named if str(path) in missing]


def unseen_hint(unseen: Sequence[tuple[str, Path]]) -> str:
    """The cause and the fix, in one line."""
    shown = ", ".join(f"`{text}`" for text, _path in unseen)
    private = [text for text, _path in unseen if text.startswith("~")]
    folders = sorted({str(_folder_to_show(path)) for _text, path in unseen})
    why = "the sandbox does not show it" if len(unseen) == 1 else "the sandbox does not show them"
    if private:
        why += " (~ there is the trial's own HOME; write the full path)"
    elif any(str(path).startswith(("/tmp/", "/var/tmp/", "/dev/shm/")) for _t, path in unseen):
        why += " (each sandbox has a /tmp of its own)"
    flags = " ".join(f"--show {folder}" for folder in folders)
    listed = ", ".join(f'"{folder}"' for folder in folders)
    return (
        f"{shown} exists here but {why}: show it read-only with `{flags}` or the variant option "
        f"show = [{listed}], or keep it inside the repository"
    )


def _folder_to_show(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def show_option(value: Any, label: str) -> tuple[Path, ...]:
    """The variant option ``show``: a list of existing absolute (or ``~``) folders or files."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
        raise UserError(f"variant {label}: 'show' must be a list of paths")
    paths = []
    for item in value:
        path = Path(os.path.expanduser(item))
        if not path.is_absolute():
            raise UserError(f"variant {label}: 'show' takes absolute paths, not {item!r}")
        if not path.exists():
            raise UserError(f"variant {label}: 'show' names {item!r}, which does not exist")
        paths.append(path)
    return tuple(paths)
