"""A Harbor task's Dockerfile: the plain ones read without a builder.

Most Harbor Dockerfiles take a base image, set a working folder and copy the task's files in.
Those need no build here: the base image is the environment, the files copied into the working
folder are the task's starting files, and ``ENV`` lines join the image's environment. ``RUN``
lines after harnessdrive's own marker (its export writes them) are the task's setup commands. A
Dockerfile doing anything else (``RUN``, copies elsewhere, several stages) is built with buildah
or podman where installed, and refused with that fix where not.
"""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass, field
from pathlib import Path

_IGNORED = {"LABEL", "MAINTAINER", "CMD", "ENTRYPOINT", "EXPOSE", "SHELL", "STOPSIGNAL", "ARG"}


@dataclass(frozen=True)
class PlainDockerfile:
    base: str
    workdir: str
    env: dict[str, str] = field(default_factory=dict)
    copies: tuple[tuple[str, str], ...] = ()
    """(source relative to the context, destination relative to the working folder)."""
    setup: tuple[str, ...] = ()
    """``RUN`` commands after the :data:`SETUP_MARKER` (as harnessdrive's export writes them):
    setup commands, run in every fresh copy of the working folder."""


SETUP_MARKER = "# harnessdrive: the RUN lines below are the task's setup commands"


def read_plain(path: Path) -> PlainDockerfile | str:
    """The Dockerfile as a :class:`PlainDockerfile`, or why it needs a builder."""
    base = ""
    workdir = "/"
    env: dict[str, str] = {}
    copies: list[tuple[str, str]] = []
    setup: list[str] = []
    text = path.read_text(errors="replace")
    marked = False
    for line in _logical_lines(text):
        if line == SETUP_MARKER:
            marked = True
            continue
        word, _, rest = line.partition(" ")
        keyword = word.upper()
        rest = rest.strip()
        if keyword == "FROM":
            if base:
                return "it has several stages"
            base = rest.split()[0] if rest.split() else ""
        elif keyword == "WORKDIR":
            workdir = posixpath.normpath(posixpath.join(workdir, rest))
        elif keyword == "ENV":
            parsed = _env(rest)
            if parsed is None:
                return f"ENV {rest[:40]} is not understood"
            env.update(parsed)
        elif keyword in ("COPY", "ADD"):
            parts = shlex.split(rest)
            if any(p.startswith("--") for p in parts) or len(parts) != 2:
                return f"{keyword} {rest[:40]} is more than one plain copy"
            dest = posixpath.normpath(posixpath.join(workdir, parts[1]))
            inside = posixpath.relpath(dest, workdir)
            if inside.startswith(".."):
                return f"it copies files outside its working folder ({parts[1]})"
            copies.append((parts[0], "" if inside == "." else inside))
        elif keyword == "RUN" and marked:
            setup.append(rest)
        elif keyword == "USER":
            return "it sets USER (name the built image instead)"
        elif keyword not in _IGNORED:
            return f"it runs {keyword} steps"
    if not base:
        return "it names no base image"
    return PlainDockerfile(base, workdir, env, tuple(copies), tuple(setup))


def _logical_lines(text: str) -> list[str]:
    lines, current = [], ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not current and stripped == SETUP_MARKER:
            lines.append(stripped)
            continue
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        lines.append((current + stripped).strip())
        current = ""
    if current.strip():
        lines.append(current.strip())
    return lines


def _env(rest: str) -> dict[str, str] | None:
    try:
        parts = shlex.split(rest)
    except ValueError:
        return None
    if parts and all("=" in p for p in parts):
        return dict(p.split("=", 1) for p in parts)
    if len(parts) >= 2 and "=" not in parts[0]:
        return {parts[0]: " ".join(parts[1:])}
    return None
