"""What this machine can do: the tools harnessdrive needs and every harness it knows."""

from __future__ import annotations

import dataclasses
import platform
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from harnessdrive.harnesses.base import HarnessInfo
from harnessdrive.harnesses.registry import available, get_harness, origins
from harnessdrive.running.sandbox_choice import describe_auto
from harnessdrive.sandbox.bwrap import nested_problem
from harnessdrive.sandbox.runner import describe_sandbox
from harnessdrive.sandbox.scratch_place import scratch_place


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True


def check_tools() -> list[Check]:
    checks = [
        Check(
            "python", sys.version_info >= (3, 11), f"{platform.python_version()} ({sys.executable})"
        ),
        _version_check("git", ["git", "--version"], required=True),
        _version_check("bwrap", ["bwrap", "--version"], required=False),
    ]
    name, detail = describe_sandbox("auto")
    checks.append(Check("sandbox", name == "bwrap", f"{name}: {detail}", required=False))
    checks.append(Check("--sandbox auto", name == "bwrap", describe_auto(), required=False))
    for kind, footprint in (("agents", None), ("known changes", 0)):
        place = scratch_place(footprint)
        checks.append(
            Check(f"scratch ({kind})", True, f"{place.folder}: {place.why}", required=False)
        )
    if name == "bwrap":
        problem = nested_problem()
        checks.append(
            Check(
                "nested sandbox",
                problem is None,
                "an agent's own bubblewrap starts inside ours (without --proc)"
                if problem is None
                else problem,
                required=False,
            )
        )
    checks += image_checks()
    return checks


_IMAGE_TOOL_USES = {
    "skopeo": "copies images into the cache",
    "umoci": "unpacks images into root file systems",
    "buildah": "builds a task's Dockerfile",
    "podman": "builds a task's Dockerfile (when buildah is missing)",
}


def image_checks() -> list[Check]:
    """The image tools (optional: only tasks naming an image need them) and the cache's size."""
    from harnessdrive.environments.oci.cache import ImageCache
    from harnessdrive.environments.oci.tools import available_tools

    checks = []
    for tool, where in available_tools().items():
        use = _IMAGE_TOOL_USES[tool]
        detail = f"{where}: {use}" if where else f"not installed; it {use} (apt-get install {tool})"
        checks.append(Check(tool, where is not None, detail, required=False))
    cache = ImageCache()
    images = len(cache.images())
    checks.append(
        Check(
            "image cache",
            True,
            f"{cache.folder}: {images} image(s), {cache.size() / 2**20:.1f} MiB",
            required=False,
        )
    )
    return checks


def harness_infos() -> list[HarnessInfo]:
    # Each installed CLI is asked its version, a node or Python start-up of its own (seconds
    # each on a busy machine): they are asked side by side, not one after the other.
    where = origins()
    names = list(available())
    with ThreadPoolExecutor(max_workers=max(1, len(names))) as pool:
        infos = list(pool.map(_harness_info, names))
    return [
        dataclasses.replace(info, origin=where.get(name, ""))
        for name, info in zip(names, infos, strict=True)
    ]


def _harness_info(name: str) -> HarnessInfo:
    try:
        return get_harness(name).info()
    except Exception as exc:  # a broken third-party adapter must not hide the others
        return HarnessInfo(name=name, installed=False, detail=f"cannot load: {exc}")


def _version_check(name: str, argv: list[str], *, required: bool) -> Check:
    if shutil.which(argv[0]) is None:
        return Check(name, False, "not found on PATH", required)
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check(name, False, str(exc), required)
    text = (out.stdout or out.stderr).strip().splitlines()
    return Check(name, out.returncode == 0, text[0] if text else "", required)
