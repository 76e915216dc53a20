"""A Harbor task's ``solution/solve.sh`` turned into our reference: run once at import, inside
the task's image, on a copy of its starting files; what it changed becomes ``solution.patch``."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from harnessdrive.errors import ImageError
from harnessdrive.sandbox.image_root import ImageRoot
from harnessdrive.sandbox.runner import Isolation, get_sandbox

SOLUTION_INSIDE = "/solution"
_SOLVE_TIMEOUT = 1800.0


def reference_patch(repo: Path, solution: Path, image: ImageRoot, timeout: float) -> str:
    """The change ``solution/solve.sh`` makes to ``repo`` (a git diff, binary-safe)."""
    with tempfile.TemporaryDirectory(prefix="harbor-solve-") as scratch:
        base = Path(scratch)
        work, home, tmp, solution_copy = (base / n for n in ("work", "home", "tmp", "solution"))
        shutil.copytree(repo, work, symlinks=True)
        shutil.copytree(solution, solution_copy, symlinks=True)
        home.mkdir()
        tmp.mkdir()
        _git(work, "init", "-q")
        _git(work, "add", "-A")
        _git(work, "commit", "-q", "--allow-empty", "-m", "base")
        log = base / "solve.log"
        sandbox = get_sandbox("bwrap").with_image(image)
        result = sandbox.run(
            ["bash", f"{SOLUTION_INSIDE}/solve.sh"],
            cwd=work,
            env={"HOME": str(home), "TMPDIR": str(tmp), "PATH": image.environment({})["PATH"]},
            timeout=min(timeout, _SOLVE_TIMEOUT),
            stdout=log,
            stderr=log,
            isolation=Isolation(
                writable=(work, home, tmp),
                mounts=((solution_copy, SOLUTION_INSIDE, False),),
            ),
        )
        if not result.ok:
            lines = log.read_text(errors="replace").strip().splitlines()
            raise ImageError(
                f"solution/solve.sh failed: {lines[-1] if lines else result.exit_code}"
            )
        _git(work, "add", "-A")
        return _git(work, "diff", "--cached", "--binary")


def _git(folder: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-c", "user.name=harnessdrive", "-c", "user.email=harnessdrive@localhost", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise ImageError(f"git {args[0]} failed: {out.stderr.strip()[:200]}")
    return out.stdout
