"""Filling the store: an environment built once from a prototype copy, with the project's own
editable-install files moved aside (each copy gets them rewritten to its own path) and the
files the install wrote into the tree kept. Part of the setup script
(:mod:`harnessdrive.mining.envsetup`): standard library only.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import urllib.parse
import urllib.request
from pathlib import Path

if __package__:
    from harnessdrive.mining import envbuild, envkeys
else:  # run as a script, beside envsetup.py
    import envbuild  # type: ignore[import-not-found, no-redef]
    import envkeys  # type: ignore[import-not-found, no-redef]

# Folders the install's own products never need from the tree: tools' caches and build output.
_NOT_GENERATED = frozenset(
    {".git", ".venv", "venv", "__pycache__", "build", "dist", ".eggs", "node_modules", ".tox",
     ".nox", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
)  # fmt: skip
_GENERATED_LIMIT = 32 * 1024 * 1024
"""At most this many bytes of generated files are kept (a version file is a few hundred)."""


def detach_project(env: Path, prototype: Path) -> list[str]:
    """Move the project's own editable-install files out of the shared site-packages.

    They point at the prototype copy; :func:`link_python` writes them into each copy's thin
    environment with that copy's path instead. Returns the files moved.
    """
    site = envkeys.site_packages(env)
    keep = env / "project"
    moved: list[str] = []
    for dist_info in sorted(site.glob("*.dist-info")):
        if not _editable_install_of(dist_info, prototype):
            continue
        record = (dist_info / "RECORD").read_text(encoding="utf-8").splitlines()
        for row in csv.reader(record):
            if not row:
                continue
            source = Path(os.path.normpath(site / row[0]))
            if not source.is_file() or "__pycache__" in source.parts:
                continue
            if source.is_relative_to(site):
                destination = keep / "site" / source.relative_to(site)
            elif source.parent == envkeys.env_python(env).parent:
                destination = keep / "bin" / source.name
            else:
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(source, destination)
            moved.append(destination.relative_to(keep).as_posix())
        shutil.rmtree(dist_info, ignore_errors=True)
    return moved


def _editable_install_of(dist_info: Path, prototype: Path) -> bool:
    try:
        direct = json.loads((dist_info / "direct_url.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(direct, dict) or not direct.get("dir_info", {}).get("editable"):
        return False
    url = urllib.parse.urlparse(str(direct.get("url", "")))
    if url.scheme != "file":
        return False
    return Path(urllib.request.url2pathname(url.path)).resolve() == prototype.resolve()


def tree_files(root: Path) -> set[str]:
    """Every file under ``root`` outside caches, build output and metadata folders."""
    found: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [
            d for d in dirnames if d not in _NOT_GENERATED and not d.endswith(".egg-info")
        ]
        folder = Path(dirpath).relative_to(root)
        found.update((folder / name).as_posix() for name in filenames)
    return found


def keep_generated(root: Path, env: Path, before: set[str]) -> list[str]:
    """Copy the files that appeared in ``root`` since ``before`` into the environment."""
    kept: list[str] = []
    total = 0
    for relative in sorted(tree_files(root) - before):
        source = root / relative
        if source.is_symlink() or not source.is_file():
            continue
        total += source.stat().st_size
        if total > _GENERATED_LIMIT:
            break
        target = env / "project" / envkeys.GENERATED / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        kept.append(relative)
    return kept


def build_into_store(
    root: Path,
    store: Path,
    kind: str,
    *,
    pytest: bool,
    choice: envkeys.Choice = envkeys.DEFAULT_CHOICE,
) -> Path | None:
    """Build the environment ``root`` needs into the store, unless it is there already."""
    key = envkeys.environment_key(root, kind, pytest=pytest, choice=choice)
    if key is None:
        return None
    folder = envkeys.environment_folder(store, kind, key)
    if envkeys.is_ready(folder):
        print(f"{kind} environment {key} is ready", flush=True)
        return folder
    envkeys.remove(folder)  # an earlier build that did not finish
    folder.mkdir(parents=True)
    if kind == "python":
        before = tree_files(root)
        envbuild.build_python(root, folder, pytest=pytest, choice=choice)
        moved = detach_project(folder, root)
        info = {
            "prototype": str(root),
            "env": str(folder),
            "project_files": moved,
            "generated_files": keep_generated(root, folder, before),
        }
        (folder / envkeys.ENV_INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    else:
        envbuild.install_node(root)
        if (root / "node_modules").is_dir():
            shutil.move(root / "node_modules", folder / "node_modules")
        else:
            (folder / "node_modules").mkdir()  # a project without dependencies
    (folder / envkeys.READY).write_text(key + "\n", encoding="utf-8")
    print(f"built the {kind} environment {key}", flush=True)
    return folder
