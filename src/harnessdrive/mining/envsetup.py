"""Test environments for fresh copies, built once per set of dependency manifests and shared.

A fresh copy of a Python project needs a virtual environment with its dependencies; a Node
project needs ``node_modules``. Building one per copy costs minutes, and thirty commits that
share a ``pyproject.toml`` need the same environment. So each environment is built once into a
store, under a key that hashes the manifests it was built from, and every copy links to it:

- Python: the store holds a full virtual environment with the dependencies and the project's
  test extras. A copy gets a thin ``.venv`` of its own (no packages, made in milliseconds) whose
  site-packages chains to the shared one, plus the project's own editable-install files
  rewritten to point at the copy, so tests import the copy's code and never another copy's.
  What the project's install wrote into its own tree (a version file made from the git tags, as
  hatch-vcs and setuptools-scm write it; an extension built in place) is kept with the
  environment and written into each copy that does not have it.
- Node: ``node_modules`` is installed from the lockfile once; a copy gets a link to it.

When the store has no environment for a copy's manifests (a change edited them after mining),
the copy builds its own in place, as a plain setup command would.

This file is a script with no imports outside the standard library: a task's setup command runs
it by path, from a copy kept next to the environments it serves::

    python envsetup.py link  [--python] [--pytest] [--node]   # in a copy: link, or build there
    python envsetup.py build [--python] [--pytest] [--node]   # in a prototype: fill the store
    python envsetup.py fresh [--python] [--pytest] [--node]   # in a copy: always build there

``--extras a,b`` and ``--groups c`` choose the extras and dependency groups installed with the
project (default: the ones :func:`pymanifests.default_extras` and ``default_groups`` choose).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import urllib.parse
import urllib.request
import venv
from dataclasses import dataclass
from pathlib import Path

if __package__:
    from harnessdrive.mining import pymanifests
else:  # run as a script, beside its copy of pymanifests.py; the store gets no __pycache__
    sys.dont_write_bytecode = True
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
_NOT_GENERATED = frozenset(
    {".git", ".venv", "venv", "__pycache__", "build", "dist", ".eggs", "node_modules", ".tox",
     ".nox", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
)  # fmt: skip
_GENERATED_LIMIT = 32 * 1024 * 1024
"""At most this many bytes of generated files are kept (a version file is a few hundred)."""


class SetupFailed(Exception):
    """An environment could not be built or linked; the message says why."""


# --- keys ------------------------------------------------------------------------------------


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


# --- building --------------------------------------------------------------------------------


def _run(argv: list[str], cwd: Path) -> None:
    print("$ " + " ".join(argv), flush=True)
    result = subprocess.run(argv, cwd=cwd, check=False)
    if result.returncode != 0:
        raise SetupFailed(f"{' '.join(argv[:4])} ... exited with {result.returncode}")


def _site_packages(env: Path) -> Path:
    paths = sysconfig.get_paths(vars={"base": str(env), "platbase": str(env)})
    return Path(paths["purelib"])


def _env_python(env: Path) -> Path:
    return env / ("Scripts" if os.name == "nt" else "bin") / "python"


def _pip(env: Path) -> list[str]:
    """pip for ``env``: this interpreter's pip aimed at it (fast), else pip installed into it."""
    python = str(_env_python(env))
    if importlib.util.find_spec("pip") is not None:
        import pip

        version = tuple(int(p) for p in re.findall(r"\d+", pip.__version__)[:2])
        if version >= (22, 3):  # the first pip with --python
            return [sys.executable, "-m", "pip", "--python", python]
    _run([python, "-m", "ensurepip", "--default-pip"], env)
    return [python, "-m", "pip"]


def _uv() -> str | None:
    """uv beside this interpreter (installed into the same environment) or on PATH."""
    beside = Path(sys.executable).parent / "uv"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("uv")


def _sync_with_uv(root: Path, env: Path, uv: str, choice: Choice) -> None:
    """Exactly what uv.lock pins, with the chosen extras and groups, into ``env``."""
    argv = [uv, "sync", "--frozen", "--no-progress", "--python", sys.executable]
    for extra in choice.extras_for(root):
        argv += ["--extra", extra]
    for group in choice.groups_for(root):
        argv += ["--group", group]
    print("$ UV_PROJECT_ENVIRONMENT=" + str(env) + " " + " ".join(argv), flush=True)
    done = subprocess.run(argv, cwd=root, env={**os.environ, "UV_PROJECT_ENVIRONMENT": str(env)})
    if done.returncode != 0:
        raise SetupFailed(f"uv sync --frozen ... exited with {done.returncode}")


def build_python(root: Path, env: Path, *, pytest: bool, choice: Choice = DEFAULT_CHOICE) -> None:
    """A virtual environment at ``env`` with what the project in ``root`` needs for its tests.

    A project with a ``uv.lock`` gets exactly what it pins (``uv sync``, where uv is installed);
    any other, what its requirements files and manifests ask for (pip), with the chosen extras
    and dependency groups.
    """
    uv = _uv() if (root / "uv.lock").is_file() else None
    if uv is not None:
        _sync_with_uv(root, env, uv, choice)
        if pytest:
            _ensure_pytest(env, [*_pip(env), "install", "--disable-pip-version-check"], root)
        return
    venv.EnvBuilder(symlinks=os.name != "nt", with_pip=False, clear=True).create(env)
    pip = [*_pip(env), "install", "--disable-pip-version-check", "--no-input"]
    pip += ["--progress-bar", "off"]
    names = pymanifests.python_manifests(root)
    constraints = [arg for name in pymanifests.constraint_files(names) for arg in ("-c", name)]
    installed = pymanifests.requirements_files(names)
    for name in installed:
        _run([*pip, *constraints, "-r", name], root)
    if pymanifests.installable(root):
        _install_project([*pip, *constraints], root, choice)
    groups = choice.groups_for(root)
    if groups:
        print(f"dependency groups: {', '.join(groups)}", flush=True)
        wanted = pymanifests.group_requirements(root, groups)
        _install_together_else_each([*pip, *constraints], wanted, root, "the groups'")
    _install_tox_deps([*pip, *constraints], pymanifests.tox_requirements(root, installed), root)
    if pytest:
        _ensure_pytest(env, [*pip, *constraints], root)


def _install_project(pip_install: list[str], root: Path, choice: Choice) -> None:
    """The project, editable, with its extras. Extras chosen by default that do not install on
    this interpreter (an old pin, a native library missing) are dropped, first all but the
    test-named ones, then all, and the log says so; extras the user chose must install."""
    extras = choice.extras_for(root)
    tries = [extras]
    if choice.extras is None:
        tests = [e for e in extras if e in pymanifests.test_extras(root)]
        tries += [t for t in (tests, []) if t != extras]
    for index, chosen in enumerate(tries):
        print(f"extras: {', '.join(chosen) or '(none)'}", flush=True)
        target = "." + (f"[{','.join(chosen)}]" if chosen else "")
        try:
            _run([*pip_install, "-e", target], root)
            return
        except SetupFailed as failed:
            if index + 1 == len(tries):
                raise
            print(f"the project did not install with {target}: {failed}", flush=True)


def _install_together_else_each(
    pip_install: list[str], wanted: list[str], root: Path, whose: str
) -> None:
    if not wanted:
        return
    try:
        _run([*pip_install, *wanted], root)
        return
    except SetupFailed:
        pass
    for requirement in wanted:
        try:
            _run([*pip_install, requirement], root)
        except SetupFailed as failed:
            print(f"{whose} {requirement} was not installed: {failed}", flush=True)


def _install_tox_deps(pip_install: list[str], tox: list[str], root: Path) -> None:
    """tox.ini's test dependencies, together, else one by one: written for the interpreters of
    their day, some may not install on this one (an old pin), and the others are still needed.
    What does not install is logged; the tests then say whether it mattered."""
    constraints: list[str] = []
    groups: list[list[str]] = []
    pending = iter(tox)
    for arg in pending:
        if arg == "-c":
            constraints += [arg, next(pending)]
        else:
            groups.append([arg, next(pending)] if arg == "-r" else [arg])
    if not groups:
        return
    try:
        _run([*pip_install, *tox], root)
        return
    except SetupFailed:
        pass
    for group in groups:
        try:
            _run([*pip_install, *constraints, *group], root)
        except SetupFailed as failed:
            print(f"tox.ini's {' '.join(group)} was not installed: {failed}", flush=True)


def _ensure_pytest(env: Path, pip_install: list[str], root: Path) -> None:
    probe = [str(_env_python(env)), "-c", "import pytest"]
    if subprocess.run(probe, check=False, capture_output=True).returncode != 0:
        _run([*pip_install, "pytest"], root)


def detach_project(env: Path, prototype: Path) -> list[str]:
    """Move the project's own editable-install files out of the shared site-packages.

    They point at the prototype copy; :func:`link_python` writes them into each copy's thin
    environment with that copy's path instead. Returns the files moved.
    """
    site = _site_packages(env)
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
            elif source.parent == _env_python(env).parent:
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
        target = env / "project" / GENERATED / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        kept.append(relative)
    return kept


def install_node(root: Path) -> None:
    lockfile = node_lockfile(root)
    if lockfile is None:
        raise SetupFailed("no package.json with a lockfile")
    command = dict(NODE_INSTALLERS)[lockfile]
    if shutil.which(command[0]) is None:
        raise SetupFailed(f"{command[0]} is not installed, and {lockfile} needs it")
    _run(list(command), root)


def build_into_store(
    root: Path, store: Path, kind: str, *, pytest: bool, choice: Choice = DEFAULT_CHOICE
) -> Path | None:
    """Build the environment ``root`` needs into the store, unless it is there already."""
    key = environment_key(root, kind, pytest=pytest, choice=choice)
    if key is None:
        return None
    folder = environment_folder(store, kind, key)
    if is_ready(folder):
        print(f"{kind} environment {key} is ready", flush=True)
        return folder
    _remove(folder)  # an earlier build that did not finish
    folder.mkdir(parents=True)
    if kind == "python":
        before = tree_files(root)
        build_python(root, folder, pytest=pytest, choice=choice)
        moved = detach_project(folder, root)
        info = {
            "prototype": str(root),
            "env": str(folder),
            "project_files": moved,
            "generated_files": keep_generated(root, folder, before),
        }
        (folder / ENV_INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    else:
        install_node(root)
        if (root / "node_modules").is_dir():
            shutil.move(root / "node_modules", folder / "node_modules")
        else:
            (folder / "node_modules").mkdir()  # a project without dependencies
    (folder / READY).write_text(key + "\n", encoding="utf-8")
    print(f"built the {kind} environment {key}", flush=True)
    return folder


# --- linking ---------------------------------------------------------------------------------


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def link_python(root: Path, shared: Path) -> None:
    """A thin ``.venv`` in ``root`` that sees the shared packages and the copy's own code."""
    thin = root / ".venv"
    _remove(thin)
    venv.EnvBuilder(symlinks=os.name != "nt", with_pip=False, clear=True).create(thin)
    site = _site_packages(thin)
    line = f"import site; site.addsitedir({str(_site_packages(shared))!r})\n"
    (site / SHARED_PTH).write_text(line, encoding="utf-8")
    info = json.loads((shared / ENV_INFO).read_text(encoding="utf-8"))
    prototype, here = os.fsencode(info["prototype"]), os.fsencode(str(root))
    project_site = shared / "project" / "site"
    if project_site.is_dir():
        for source in sorted(project_site.rglob("*")):
            if source.is_file():
                target = site / source.relative_to(project_site)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(source.read_bytes().replace(prototype, here))
    generated = shared / "project" / GENERATED
    for relative in info.get("generated_files", []):
        target = root / relative
        if not target.exists() and not target.is_symlink():  # the copy's own file wins
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(generated / relative, target)
    # Console scripts (pytest, the project's own) must start the thin interpreter.
    old = os.fsencode(str(_env_python(Path(info["env"]))))
    new = os.fsencode(str(_env_python(thin)))
    thin_bin = _env_python(thin).parent
    for folder in (_env_python(shared).parent, shared / "project" / "bin"):
        if not folder.is_dir():
            continue
        for source in sorted(folder.iterdir()):
            target = thin_bin / source.name
            if target.exists() or target.is_symlink() or not source.is_file():
                continue
            data = source.read_bytes()
            body = script_body(data, old)
            if body is not None:
                target.write_bytes(script_header(new) + body)
                target.chmod(0o755)
            elif os.access(source, os.X_OK):
                os.symlink(source, target)  # a native program (ruff, say) needs no interpreter


# The kernel reads at most 127 bytes of a "#!" line and splits it at spaces, so pip writes a
# long interpreter path as a shell line that starts it instead; so do we.
_SHELL_LAUNCH = b"#!/bin/sh\n'''exec' "
_SHELL_LAUNCH_END = b"\n' '''\n"
_SHEBANG_LIMIT = 127


def script_body(data: bytes, python: bytes) -> bytes | None:
    """The script after its launch line(s), when ``python`` launches it; else None."""
    if data.startswith(b"#!" + python + b"\n"):
        return data[len(python) + 3 :]
    if data.startswith(_SHELL_LAUNCH) and python in data[:4096]:
        end = data.find(_SHELL_LAUNCH_END)
        return data[end + len(_SHELL_LAUNCH_END) :] if end != -1 else None
    return None


def script_header(python: bytes) -> bytes:
    """The launch line(s) for ``python``: the shell form for a long path or one with spaces."""
    if len(python) + 2 <= _SHEBANG_LIMIT and b" " not in python:
        return b"#!" + python + b"\n"
    quoted = python.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    return _SHELL_LAUNCH + b'"' + quoted + b'" "$0" "$@"' + _SHELL_LAUNCH_END


def link_node(root: Path, shared: Path) -> None:
    target = root / "node_modules"
    _remove(target)
    os.symlink(shared / "node_modules", target)


def link_or_build(
    root: Path, store: Path | None, kind: str, *, pytest: bool, choice: Choice = DEFAULT_CHOICE
) -> str:
    """Give the copy in ``root`` its environment; says what it did."""
    key = environment_key(root, kind, pytest=pytest, choice=choice)
    if key is None:
        return f"no {kind} environment needed"
    folder = environment_folder(store, kind, key) if store is not None else None
    if folder is not None and is_ready(folder):
        (link_python if kind == "python" else link_node)(root, folder)
        return f"linked the shared {kind} environment {key}"
    if kind == "python":
        build_python(root, root / ".venv", pytest=pytest, choice=choice)
    else:
        install_node(root)
    return f"built the {kind} environment {key} in place"


# --- command line ----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Shared test environments for fresh copies.")
    parser.add_argument("mode", choices=("link", "build", "fresh"))
    parser.add_argument("--python", action="store_true", help="a Python virtual environment")
    parser.add_argument("--pytest", action="store_true", help="make sure pytest is installed")
    parser.add_argument("--node", action="store_true", help="node_modules from the lockfile")
    parser.add_argument("--store", type=Path, help="default: this file's folder")
    parser.add_argument("--extras", help="extras to install, comma-separated (default: chosen)")
    parser.add_argument("--groups", help="dependency groups, comma-separated (default: chosen)")
    args = parser.parse_args(argv)
    choice = Choice(_names(args.extras), _names(args.groups))
    store = (args.store or Path(__file__).resolve().parent).resolve()
    root = Path.cwd()
    try:
        for kind in (k for k in KINDS if getattr(args, k)):
            if args.mode == "build":
                build_into_store(root, store, kind, pytest=args.pytest, choice=choice)
            else:
                chosen = store if args.mode == "link" else None
                found = link_or_build(root, chosen, kind, pytest=args.pytest, choice=choice)
                print(found, flush=True)
    except (SetupFailed, OSError, ValueError) as exc:
        print(f"environment setup failed: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0


def _names(given: str | None) -> tuple[str, ...] | None:
    if given is None:
        return None
    return tuple(n.strip() for n in given.split(",") if n.strip())


if __name__ == "__main__":
    sys.exit(main())
