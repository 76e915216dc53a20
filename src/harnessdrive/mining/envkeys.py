"""What a shared test environment is called and where it lives: the store's layout, the key
that hashes the manifests an environment was built from, the extras and groups chosen, and the
layout of a virtual environment. Standard library only, like the rest of the setup script
(:mod:`harnessdrive.mining.envsetup`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

if __package__:
    from harnessdrive.mining import pymanifests
else:  # run as a script, beside envsetup.py
    import pymanifests  # type: ignore[import-not-found, no-redef]

# Lockfile, then the command that installs exactly what it pins.
NODE_INSTALLERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("package-lock.json", ("npm", "ci", "--no-audit", "--no-fund")),
    ("npm-shrinkwrap.json", ("npm", "ci", "--no-audit", "--no-fund")),
    ("pnpm-lock.yaml", ("pnpm", "install", "--frozen-lockfile")),
    ("yarn.lock", ("yarn", "install", "--frozen-lockfile")),
    ("bun.lock", ("bun", "install", "--frozen-lockfile")),
    ("bun.lockb", ("bun", "install", "--frozen-lockfile")),
)
KINDS = ("python", "node")
READY = ".ready"
ENV_INFO = "env.json"
SHARED_PTH = "_harnessdrive_shared_env.pth"
GENERATED = "generated"
"""Under an environment's ``project`` folder: the files the install wrote into the tree."""
# Folders the install's own products never need from the tree: tools' caches and build output.


class SetupFailed(Exception):
    """An environment could not be built or linked; the message says why."""


def node_lockfile(root: Path) -> str | None:
    if not (root / "package.json").is_file():
        return None
    for name, _ in NODE_INSTALLERS:
        if (root / name).is_file():
            return name
    return None


@dataclass(frozen=True)
class Choice:
    """The extras and dependency groups a Python environment installs; None: the default."""

    extras: tuple[str, ...] | None = None
    groups: tuple[str, ...] | None = None

    def key_bytes(self) -> bytes:
        parts = [",".join(x) if x is not None else "*" for x in (self.extras, self.groups)]
        return ("\0".join(parts)).encode()

    def flags(self) -> list[str]:
        flags = []
        if self.extras is not None:
            flags.append("--extras=" + ",".join(self.extras))
        if self.groups is not None:
            flags.append("--groups=" + ",".join(self.groups))
        return flags

    def extras_for(self, root: Path) -> list[str]:
        return list(self.extras) if self.extras is not None else pymanifests.default_extras(root)

    def groups_for(self, root: Path) -> list[str]:
        return list(self.groups) if self.groups is not None else pymanifests.default_groups(root)


DEFAULT_CHOICE = Choice()


def environment_key(
    root: Path, kind: str, *, pytest: bool = False, choice: Choice = DEFAULT_CHOICE
) -> str | None:
    """The store key of the environment ``root`` needs, or None when ``kind`` does not apply."""
    digest = hashlib.sha256(kind.encode() + b"\0")
    if kind == "python":
        version = f"{sys.implementation.name}{sys.version_info[0]}.{sys.version_info[1]}"
        digest.update(version.encode() + (b"\0pytest\0" if pytest else b"\0"))
        if choice != DEFAULT_CHOICE:
            digest.update(b"choice\0" + choice.key_bytes() + b"\0")
        names = pymanifests.python_manifests(root)
    elif kind == "node":
        lockfile = node_lockfile(root)
        if lockfile is None:
            return None
        names = ["package.json", lockfile]
    else:
        raise ValueError(f"unknown environment kind {kind!r}")
    for name in names:
        data = pymanifests.manifest_bytes(root, name)
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()[:24]


def environment_folder(store: Path, kind: str, key: str) -> Path:
    return store / f"{kind}-{key}"


def is_ready(folder: Path) -> bool:
    return (folder / READY).is_file()


def site_packages(env: Path) -> Path:
    paths = sysconfig.get_paths(vars={"base": str(env), "platbase": str(env)})
    return Path(paths["purelib"])


def env_python(env: Path) -> Path:
    return env / ("Scripts" if os.name == "nt" else "bin") / "python"


def remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
