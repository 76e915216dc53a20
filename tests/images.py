"""Base images for the OCI environment tests, built here from Debian's packages.

``mmdebstrap --variant=minbase`` makes a root file system (it reaches Debian's mirror once; the
result is cached), ``umoci`` turns it into an OCI layout with a working folder and an ``ENV``.
Nothing comes from a container registry. Built once per package list under the test cache
(``$HARNESSDRIVE_TEST_IMAGES``, else ``.cache/test-images`` in the checkout).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parent.parent
SUITE = "bookworm"
PYTHON_PACKAGES = ("python3", "python3-pytest", "git")
LUA_PACKAGES = ("lua5.4",)
IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def image_cache() -> Path:
    named = os.environ.get("HARNESSDRIVE_TEST_IMAGES")
    return Path(named) if named else CHECKOUT / ".cache" / "test-images"


def require_image_tools() -> None:
    missing = [t for t in ("mmdebstrap", "umoci", "skopeo", "bwrap") if shutil.which(t) is None]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{', '.join(missing)} not installed (scripts/test.sh installs them)")
        pytest.skip(f"{', '.join(missing)} not installed")


def debian_layout(name: str, packages: tuple[str, ...], workdir: str = "/app") -> str:
    """An OCI layout of Debian minbase plus ``packages``, as an image name (``oci:PATH:TAG``)."""
    require_image_tools()
    key = hashlib.sha256(repr((SUITE, packages, workdir)).encode()).hexdigest()[:12]
    folder = image_cache() / f"{name}-{key}"
    layout = folder / "layout"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "done").is_file():
            _build(folder, layout, packages, workdir)
            (folder / "done").write_text("built\n")
    return f"oci:{layout}:base"


def _build(folder: Path, layout: Path, packages: tuple[str, ...], workdir: str) -> None:
    rootfs = folder / "rootfs.tar"
    include = ",".join(packages)
    _run(
        retries=2,
        argv=[
            "mmdebstrap",
            "--quiet",
            "--variant=minbase",
            *([f"--include={include}"] if include else []),
            SUITE,
            str(rootfs),
        ],
    )
    shutil.rmtree(layout, ignore_errors=True)
    _run(["umoci", "init", "--layout", str(layout)])
    _run(["umoci", "new", "--image", f"{layout}:base"])
    _run(["umoci", "raw", "add-layer", "--image", f"{layout}:base", str(rootfs)])
    _run(["umoci", "raw", "add-layer", "--image", f"{layout}:base", str(_whiteout_layer(folder))])
    _run(
        [
            "umoci",
            "config",
            "--image",
            f"{layout}:base",
            "--config.workingdir",
            workdir,
            "--config.env",
            f"PATH={IMAGE_PATH}",
            "--config.env",
            "HARNESSDRIVE_TEST_IMAGE=1",
        ]
    )
    rootfs.unlink()


def _whiteout_layer(folder: Path) -> Path:
    """A second layer that deletes /etc/motd (a whiteout) and adds /etc/image-layer."""
    import io
    import tarfile

    path = folder / "layer2.tar"
    with tarfile.open(path, "w") as tar:
        for name, data in (("etc/.wh.motd", b""), ("etc/image-layer", b"second layer\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return path


def _run(argv: list[str], retries: int = 0) -> None:
    # A mirror's passing hiccup should not fail a test session: the download is tried again.
    for attempt in range(retries + 1):
        out = subprocess.run(argv, capture_output=True, text=True, check=False)
        if out.returncode == 0:
            return
        if attempt == retries:
            raise RuntimeError(f"{argv[0]} failed: {out.stderr.strip()[-500:]}")


def python_image() -> str:
    return debian_layout("debian-python", PYTHON_PACKAGES)


def lua_image() -> str:
    return debian_layout("debian-lua", LUA_PACKAGES)
