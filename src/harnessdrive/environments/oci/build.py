"""Dockerfiles, built without a daemon by ``buildah`` (or ``podman``) where installed."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from harnessdrive.environments.oci.tools import run_tool
from harnessdrive.errors import ImageError

_NO_RUNTIME = (
    "where the builder cannot start a container runtime (a machine without cgroup control), "
    "BUILDAH_ISOLATION=chroot runs the RUN steps in a chroot instead"
)


def builder() -> str | None:
    """The program that builds Dockerfiles here: buildah, else podman; None when neither is."""
    return shutil.which("buildah") or shutil.which("podman")


def build_dockerfile(dockerfile: Path, destination: str) -> None:
    """Build ``dockerfile`` (its folder the context) and push the image to ``destination``
    (a skopeo-style ``oci:LAYOUT:TAG``)."""
    found = builder()
    if found is None:
        raise ImageError(
            f"Dockerfile {dockerfile}: building it needs buildah or podman, neither installed "
            "(Debian: apt-get install buildah), or name a built image instead"
        )
    name = "localhost/harnessdrive-build:" + destination.rsplit(":", 1)[-1]
    build = "bud" if found.endswith("buildah") else "build"
    try:
        run_tool(
            [found, build, "--quiet", "-t", name, "-f", str(dockerfile), str(dockerfile.parent)],
            f"Dockerfile {dockerfile}: the build failed",
        )
    except ImageError as exc:
        if "running runtime" in str(exc) and "BUILDAH_ISOLATION" not in os.environ:
            raise ImageError(f"{exc}; {_NO_RUNTIME}") from None
        raise
    try:
        run_tool([found, "push", name, destination], f"Dockerfile {dockerfile}: cannot be stored")
    finally:
        # The image lives on in the cache; the builder's own copy would only pile up.
        with contextlib.suppress(ImageError):
            run_tool([found, "rmi", name], f"Dockerfile {dockerfile}: the built image")
