"""Dockerfiles, built without a daemon by ``buildah`` (or ``podman``) where installed."""

from __future__ import annotations

import shutil
from pathlib import Path

from harnessdrive.environments.oci.tools import run_tool
from harnessdrive.errors import ImageError


def build_dockerfile(dockerfile: Path, destination: str) -> None:
    """Build ``dockerfile`` (its folder the context) and push the image to ``destination``
    (a skopeo-style ``oci:LAYOUT:TAG``)."""
    builder = shutil.which("buildah") or shutil.which("podman")
    if builder is None:
        raise ImageError(
            f"Dockerfile {dockerfile}: building it needs buildah or podman, neither installed "
            "(Debian: apt-get install buildah), or name a built image instead"
        )
    name = "localhost/harnessdrive-build:" + destination.rsplit(":", 1)[-1]
    build = "bud" if builder.endswith("buildah") else "build"
    run_tool(
        [builder, build, "--quiet", "-t", name, "-f", str(dockerfile), str(dockerfile.parent)],
        f"Dockerfile {dockerfile}: the build failed",
    )
    run_tool([builder, "push", name, destination], f"Dockerfile {dockerfile}: cannot be stored")
