"""The image cache: one content-addressed OCI layout, and one unpacked root per digest.

::

    <cache>/layout/            an OCI layout (blobs by sha256) every source is copied into,
                               tagged by its source's key
    <cache>/roots/<hex>/       rootfs/ (read-only to sandboxes) and image.json (env, workdir,
                               user, digest) for the image of manifest digest sha256:<hex>

Blobs shared by images are stored once (skopeo copies only the missing ones); a root is unpacked
once per manifest digest and shared by every trial, check and mining run that names the image.
A root appears whole or not at all: it is unpacked beside its place and renamed into it.
The cache is ``$HARNESSDRIVE_IMAGE_CACHE``, else
``${XDG_CACHE_HOME:-~/.cache}/harnessdrive/images``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnessdrive.environments.oci.sources import ImageSource
from harnessdrive.environments.oci.tools import run_tool, tool
from harnessdrive.errors import ImageError
from harnessdrive.sandbox.image_root import ImageRoot

_THREAD_LOCK = threading.Lock()
_MANIFEST_TYPES = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    source = os.environ if env is None else env
    named = source.get("HARNESSDRIVE_IMAGE_CACHE")
    if named:
        return Path(named).expanduser()
    base = source.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "harnessdrive" / "images"


@dataclass(frozen=True)
class CachedImage:
    digest: str
    root: Path
    size: int
    tags: tuple[str, ...]


class ImageCache:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = (folder or default_cache_dir()).resolve()

    @property
    def layout(self) -> Path:
        return self.folder / "layout"

    @property
    def roots(self) -> Path:
        return self.folder / "roots"

    def resolve(self, source: ImageSource) -> ImageRoot:
        """The unpacked root of ``source``: copied and unpacked the first time, found after."""
        with self._locked():
            digest = self._known_digest(source) or self._copy_in(source)
            place = self.roots / digest.removeprefix("sha256:")
            if not (place / "image.json").is_file():
                self._unpack(source.key, digest, place)
        return read_root(place)

    def _known_digest(self, source: ImageSource) -> str | None:
        """The digest the cache holds for ``source`` already, without copying it again. A
        local layout or archive is copied again when its file changed (its digest may not)."""
        if source.kind in ("registry",):
            return _tagged_digest(self.layout, source.key)
        if source.kind == "oci":
            digest = _tagged_digest(Path(source.location), source.tag or None)
            if digest and (self.roots / digest.removeprefix("sha256:") / "image.json").is_file():
                return digest
        return None

    def _copy_in(self, source: ImageSource) -> str:
        skopeo = tool("skopeo", f"image {source.describe()}")
        self.layout.mkdir(parents=True, exist_ok=True)
        if source.kind == "dockerfile":
            from harnessdrive.environments.oci.build import build_dockerfile

            build_dockerfile(Path(source.location), f"oci:{self.layout}:{source.key}")
        else:
            run_tool(
                [
                    skopeo,
                    "copy",
                    "--quiet",
                    source.skopeo_name(),
                    f"oci:{self.layout}:{source.key}",
                ],
                f"image {source.describe()}: cannot be copied",
            )
        digest = _tagged_digest(self.layout, source.key)
        if digest is None:
            raise ImageError(f"image {source.describe()}: copied, but no manifest was found")
        return digest

    def _unpack(self, tag: str, digest: str, place: Path) -> None:
        umoci = tool("umoci", f"unpacking image {digest}")
        work = place.with_name(place.name + ".partial")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        run_tool(
            [umoci, "raw", "unpack", "--image", f"{self.layout}:{tag}", str(work / "rootfs")],
            f"image {digest}: cannot be unpacked",
        )
        config = _image_config(self.layout, digest)
        settings = config.get("config") or {}
        record = {
            "digest": digest,
            "env": _env_of(settings.get("Env") or []),
            "workdir": settings.get("WorkingDir") or "/",
            "user": settings.get("User") or "",
        }
        (work / "image.json").write_text(json.dumps(record, indent=2) + "\n")
        _read_only(work / "rootfs")
        shutil.rmtree(place, ignore_errors=True)
        os.rename(work, place)

    def images(self) -> list[CachedImage]:
        """Every unpacked image, with its size on disk and the source tags naming it."""
        tags: dict[str, list[str]] = {}
        for name, digest in _layout_tags(self.layout).items():
            tags.setdefault(digest, []).append(name)
        found = []
        if self.roots.is_dir():
            for place in sorted(self.roots.iterdir()):
                if (place / "image.json").is_file():
                    digest = "sha256:" + place.name
                    found.append(
                        CachedImage(digest, place, _size(place), tuple(tags.get(digest, ())))
                    )
        return found

    def size(self) -> int:
        return _size(self.folder) if self.folder.is_dir() else 0

    def prune(self) -> int:
        """Remove every unpacked root and the layout; the bytes freed."""
        with self._locked():
            freed = self.size()
            for part in (self.roots, self.layout):
                _writable(part)
                shutil.rmtree(part, ignore_errors=True)
        return freed

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with _THREAD_LOCK, open(self.folder / "lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def read_root(place: Path) -> ImageRoot:
    record = json.loads((place / "image.json").read_text())
    return ImageRoot(
        root=place / "rootfs",
        digest=str(record["digest"]),
        env=dict(record.get("env") or {}),
        workdir=str(record.get("workdir") or "/"),
        user=str(record.get("user") or ""),
    )


def resolve_image(source: ImageSource, cache: ImageCache | None = None) -> ImageRoot:
    """``source`` unpacked in ``cache`` (default: the user's image cache)."""
    return (cache or ImageCache()).resolve(source)


def _layout_tags(layout: Path) -> dict[str, str]:
    try:
        index = json.loads((layout / "index.json").read_text())
    except (OSError, ValueError):
        return {}
    tags = {}
    for entry in index.get("manifests") or []:
        name = (entry.get("annotations") or {}).get("org.opencontainers.image.ref.name")
        if isinstance(name, str) and isinstance(entry.get("digest"), str):
            tags[name] = entry["digest"]
    return tags


def _tagged_digest(layout: Path, tag: str | None) -> str | None:
    """The manifest digest of ``tag`` in ``layout`` (of its only manifest when ``tag`` is
    None); an image index is followed to its linux/amd64 manifest."""
    try:
        index = json.loads((layout / "index.json").read_text())
    except (OSError, ValueError):
        return None
    entries = index.get("manifests") or []
    if tag is not None:
        entries = [
            e
            for e in entries
            if (e.get("annotations") or {}).get("org.opencontainers.image.ref.name") == tag
        ]
    if len(entries) != 1 or not isinstance(entries[0].get("digest"), str):
        return None
    entry = entries[0]
    if entry.get("mediaType") in (None, *_MANIFEST_TYPES):
        return str(entry["digest"])
    return None


def _blob(layout: Path, digest: str) -> dict[str, Any]:
    algorithm, _, hexpart = digest.partition(":")
    try:
        data = json.loads((layout / "blobs" / algorithm / hexpart).read_text())
    except (OSError, ValueError) as exc:
        raise ImageError(f"image {digest}: unreadable blob ({exc})") from None
    if not isinstance(data, dict):
        raise ImageError(f"image {digest}: a blob that is not a JSON object")
    return data


def _image_config(layout: Path, digest: str) -> dict[str, Any]:
    manifest = _blob(layout, digest)
    config = manifest.get("config") or {}
    if not isinstance(config.get("digest"), str):
        raise ImageError(f"image {digest}: its manifest names no config")
    return _blob(layout, config["digest"])


def _env_of(entries: list[Any]) -> dict[str, str]:
    env = {}
    for entry in entries:
        if isinstance(entry, str) and "=" in entry:
            name, _, value = entry.partition("=")
            env[name] = value
    return env


def _read_only(root: Path) -> None:
    """No write bit anywhere in a root: the host side cannot change a shared root by mistake
    either (sandboxes see it through a read-only bind whatever its modes)."""
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                if not os.path.islink(path):
                    mode = os.lstat(path).st_mode
                    os.chmod(path, mode & ~0o222)
    with contextlib.suppress(OSError):
        os.chmod(root, os.lstat(root).st_mode & ~0o222)


def _writable(root: Path) -> None:
    if not root.exists():
        return
    for folder, dirs, _ in os.walk(root):
        for name in dirs:
            with contextlib.suppress(OSError):
                path = os.path.join(folder, name)
                if not os.path.islink(path):
                    os.chmod(path, os.lstat(path).st_mode | 0o700)
    with contextlib.suppress(OSError):
        os.chmod(root, os.lstat(root).st_mode | 0o700)


def _size(folder: Path) -> int:
    total = 0
    for current, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(current, name)).st_blocks * 512
    return total
