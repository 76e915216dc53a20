"""The programs images need (Debian packages), found once, and the fix when one is missing."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from harnessdrive.errors import ImageError

IMAGE_TOOLS = ("skopeo", "umoci", "buildah", "podman")
_COMMAND_TIMEOUT = 3600.0


def tool(name: str, purpose: str) -> str:
    """The path of ``name``; an :class:`ImageError` saying how to install it otherwise."""
    found = shutil.which(name)
    if found is None:
        raise ImageError(
            f"{purpose} needs {name}, which is not installed (Debian: apt-get install {name})"
        )
    return found


def available_tools() -> dict[str, str | None]:
    """Each image tool and where it is (None: not installed), for ``doctor``."""
    return {name: shutil.which(name) for name in IMAGE_TOOLS}


def run_tool(argv: Sequence[str], what: str, *, cwd: Path | None = None) -> str:
    """Run an image tool; its last line of error output in an :class:`ImageError` on failure."""
    try:
        out = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            check=False,
            cwd=cwd,
            timeout=_COMMAND_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ImageError(f"{what}: {exc}") from None
    if out.returncode != 0:
        lines = (out.stderr or out.stdout).strip().splitlines()
        raise ImageError(f"{what}: {lines[-1] if lines else f'exit {out.returncode}'}")
    return out.stdout
