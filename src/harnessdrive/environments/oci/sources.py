"""Where an image comes from, as a task names it.

``[environment] image`` takes one of:

- ``oci:PATH`` or ``oci:PATH:TAG``, or a folder holding an ``index.json``: an OCI layout;
- ``docker-archive:PATH``, or a file ending ``.tar``: what ``docker save`` writes;
- ``docker://NAME:TAG`` or a bare ``NAME:TAG``: a registry reference, pulled with ``skopeo``;

and ``[environment] dockerfile`` names a Dockerfile, built with ``buildah`` (or ``podman``).
Relative paths are relative to the task folder.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harnessdrive.errors import ImageError

SourceKind = Literal["oci", "docker-archive", "registry", "dockerfile"]


@dataclass(frozen=True)
class ImageSource:
    kind: SourceKind
    location: str
    """A path (absolute) for local sources, the reference for a registry."""
    tag: str = ""
    """The tag inside an OCI layout (empty: its only image)."""

    @property
    def key(self) -> str:
        """This source's name in the cache's layout: the same source, the same tag."""
        text = json.dumps([self.kind, self.location, self.tag])
        return "src-" + hashlib.sha256(text.encode()).hexdigest()[:32]

    def describe(self) -> str:
        return f"{self.kind}:{self.location}" + (f":{self.tag}" if self.tag else "")

    def skopeo_name(self) -> str:
        if self.kind == "oci":
            return f"oci:{self.location}" + (f":{self.tag}" if self.tag else "")
        if self.kind == "docker-archive":
            return f"docker-archive:{self.location}"
        return f"docker://{self.location}"


def parse_image(text: str, base: Path) -> ImageSource:
    """The source ``text`` names, relative paths read from ``base`` (the task folder)."""
    text = text.strip()
    if not text:
        raise ImageError("an empty image name")
    if text.startswith("docker://"):
        return ImageSource("registry", text.removeprefix("docker://"))
    if text.startswith("oci:"):
        rest = text.removeprefix("oci:")
        path, tag = _split_tag(rest, base)
        return ImageSource("oci", str(path), tag)
    if text.startswith("docker-archive:"):
        return ImageSource(
            "docker-archive", str(_local(text.removeprefix("docker-archive:"), base))
        )
    local = _local(text, base)
    if (local / "index.json").is_file():
        return ImageSource("oci", str(local))
    if local.is_file() and local.name.endswith(".tar"):
        return ImageSource("docker-archive", str(local))
    if "/" in text and (text.startswith((".", "/")) or local.exists()):
        raise ImageError(f"image {text}: neither an OCI layout folder nor a docker save archive")
    return ImageSource("registry", text)


def dockerfile_source(path: str, base: Path) -> ImageSource:
    local = _local(path, base)
    if not local.is_file():
        raise ImageError(f"Dockerfile {path}: not found")
    return ImageSource("dockerfile", str(local))


def _split_tag(rest: str, base: Path) -> tuple[Path, str]:
    path = _local(rest, base)
    if (path / "index.json").is_file():
        return path, ""
    head, sep, tag = rest.rpartition(":")
    if sep and (_local(head, base) / "index.json").is_file():
        return _local(head, base), tag
    raise ImageError(f"image oci:{rest}: no OCI layout (index.json) there")


def _local(text: str, base: Path) -> Path:
    path = Path(text).expanduser()
    return (path if path.is_absolute() else base / path).resolve()
