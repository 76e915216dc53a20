"""What a bubblewrap sandbox shows: the system read-only, the tools it needs, nothing of ours.

The view is an allowlist, built in layers:

1. The system folders, read-only.
2. Tool folders, read-only: the Python that runs our commands (its venv and site-packages), the
   folders a harness names for its CLI, the folders the user asked to show, each PATH folder, and
   homes such as ``CARGO_HOME``. A PATH folder never brings its parent: a ``bin`` or ``sbin``
   folder brings the ``lib``, ``lib64``, ``libexec``, ``share``, ``include`` and ``etc``
   folders beside it (what the programs of a prefix load), a ``.bin`` or ``shims`` folder, or the
   ``bin`` folder of a venv, the tool root it belongs to (``node_modules``, a version manager's
   root, the venv); any other folder comes alone. A program in a PATH folder that is a link to
   elsewhere brings what it needs there (its ``node_modules``, its venv, its own ``bin`` folder's
   library folders). A PATH entry that is a link is shown where it points and where PATH names
   it; relative entries, ``/`` and folders holding the system are never shown.
3. Covers, on top: the run's secret paths (the results folder, the suite and its tasks, the
   repositories, the hidden files, the scratch root), every results folder harnessdrive knows of
   and every results, suite or task folder found inside a shown tool folder
   (:mod:`harnessdrive.sandbox.sealed`). A PATH folder or toolchain home inside a secret path is
   not shown at all. The user's HOME and the current folder are private: covered too, with the
   tool folders inside them shown again on top (a Node install under ``~/.nvm``, say).

Covers are empty folders (read-only) or /dev/null for files.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import site
import stat
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import harnessdrive
from harnessdrive.sandbox.sealed import registered_results_folders, sealed_under

SYSTEM_ROOTS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix",
    "/snap",
    "/sys",
)
# System folders searched for results and suites too: they are not the distribution's own.
_SEARCHED_SYSTEM_ROOTS = ("/opt",)
_TOOLCHAIN_VARIABLES = (
    "CARGO_HOME",
    "RUSTUP_HOME",
    "PYENV_ROOT",
    "NVM_DIR",
    "JAVA_HOME",
    "GOROOT",
    "GOPATH",
)
_PREFIX_BIN_NAMES = ("bin", "sbin")
PREFIX_PARTS = ("bin", "sbin", "lib", "lib32", "lib64", "libexec", "share", "include", "etc")
_ROOT_BIN_NAMES = (".bin", "shims")


def _norm(path: str | Path) -> str:
    return os.path.normpath(os.path.abspath(path))


def is_inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


@functools.cache
def system_mounts() -> tuple[tuple[str, ...], ...]:
    """bwrap operations for the system folders: links stay links, folders are bound read-only."""
    ops: list[tuple[str, ...]] = []
    for root in SYSTEM_ROOTS:
        if os.path.islink(root):
            ops.append(("--symlink", os.readlink(root), root))
        elif os.path.isdir(root):
            ops.append(("--ro-bind", root, root))
    resolv = "/etc/resolv.conf"
    if os.path.islink(resolv):
        target = _norm(os.path.join("/etc", os.readlink(resolv)))
        if not any(is_inside(target, r) for r in SYSTEM_ROOTS) and os.path.exists(target):
            ops.append(("--ro-bind", os.path.dirname(target), os.path.dirname(target)))
    return tuple(ops)


def _system_bound() -> list[str]:
    return [op[2] for op in system_mounts() if op[0] == "--ro-bind"]


@functools.cache
def python_paths() -> tuple[str, ...]:
    """What ``sys.executable`` needs to run with its packages, and our own package."""
    candidates = [
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        sys.base_exec_prefix,
        os.path.dirname(os.path.realpath(sys.executable)),
        os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))),
        os.path.dirname(harnessdrive.__file__),
        *_pytest_entry_point(),
        *site.getsitepackages(),
    ]
    if site.ENABLE_USER_SITE and site.USER_SITE:
        candidates.append(site.USER_SITE)
    return tuple(candidates)


def _pytest_entry_point() -> list[str]:
    # Every pytest run in this environment loads our pytest11 entry point; where the package is
    # installed from a checkout (editable), its folder must be seen or every such run fails.
    spec = importlib.util.find_spec("harnessdrive_pytest")
    return [os.path.dirname(spec.origin)] if spec is not None and spec.origin else []


def prefix_folders(bin_folder: str | Path) -> list[str]:
    """What the programs in a ``bin`` folder may load: that folder and its prefix's own folders.

    Never the prefix itself, which may hold anything (an earlier run's results, say).
    """
    folder = _norm(bin_folder)
    name = os.path.basename(folder)
    parent = os.path.dirname(folder)
    if parent == "/" or name not in (*_ROOT_BIN_NAMES, *_PREFIX_BIN_NAMES):
        return [folder]
    if name in _ROOT_BIN_NAMES or os.path.isfile(os.path.join(parent, "pyvenv.cfg")):
        return [parent]  # a tool root of its own: node_modules, a version manager, a venv
    return [os.path.join(parent, part) for part in PREFIX_PARTS]


def tool_root(executable: str | Path) -> list[str]:
    """What one program needs of the folders around it: its ``node_modules`` folder, its venv,
    or the folders :func:`prefix_folders` gives for the folder it lies in."""
    path = _norm(executable)
    parts = Path(path).parts
    if "node_modules" in parts:
        return [str(Path(*parts[: parts.index("node_modules") + 1]))]
    venv = venv_root(path)
    if venv is not None:
        return [venv]
    return prefix_folders(os.path.dirname(path))


def venv_root(path: str | Path) -> str | None:
    """The venv a path lies in (the folder holding ``pyvenv.cfg``), if any."""
    for parent in Path(path).parents:
        if (parent / "pyvenv.cfg").is_file():
            return str(parent)
    return None


_LINKS_LOOKED_AT = 2000


@functools.lru_cache(maxsize=256)
def _link_targets(folder: str, _mtime_ns: int) -> tuple[str, ...]:
    """Where the programs of a PATH folder that are links to elsewhere really live."""
    targets: set[str] = set()
    try:
        with os.scandir(folder) as listing:
            entries = [e for _, e in zip(range(_LINKS_LOOKED_AT), listing, strict=False)]
    except OSError:
        return ()
    for entry in entries:
        if not entry.is_symlink():
            continue
        target = os.path.realpath(entry.path)
        if os.path.dirname(target) != folder and os.path.isfile(target):
            targets.update(tool_root(target))
    return tuple(sorted(targets))


def _linked_tools(folder: str) -> list[str]:
    try:
        mtime = os.stat(folder).st_mtime_ns
    except OSError:
        return []
    return list(_link_targets(folder, mtime))


@dataclass(frozen=True)
class _Show:
    source: str
    dest: str
    trusted: bool
    """Chosen by us or named by the user on purpose: shown even inside a secret path."""


def _path_shows(env: Mapping[str, str]) -> list[_Show]:
    shows: list[_Show] = []
    for entry in env.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        named = _norm(entry)
        real = os.path.realpath(named)
        linked = [] if _visible_already(real) else _linked_tools(real)
        shows += [_Show(p, p, False) for p in [*prefix_folders(real), *linked]]
        if real != named and not any(is_inside(named, root) for root in SYSTEM_ROOTS):
            # Also where PATH names it: scripts there find their library folders by that path.
            shows += [_Show(os.path.realpath(p), p, False) for p in prefix_folders(named)]
    for name in _TOOLCHAIN_VARIABLES:
        value = env.get(name)
        if value and os.path.isabs(value):
            shows.append(_Show(os.path.realpath(value), os.path.realpath(value), False))
    return shows


def _visible_already(path: str) -> bool:
    return any(is_inside(path, root) for root in SYSTEM_ROOTS)


def _usable(show: _Show) -> bool:
    if show.dest == "/":
        return False
    if not os.path.isdir(show.source) and not (show.trusted and os.path.isfile(show.source)):
        return False
    if show.source == show.dest and _visible_already(show.dest):
        return False
    # Never a folder that holds the system folders themselves.
    return not any(is_inside(root, show.dest) for root in SYSTEM_ROOTS)


def _both_forms(paths: Iterable[str | Path]) -> set[str]:
    forms: set[str] = set()
    for path in paths:
        forms.add(_norm(path))
        forms.add(os.path.realpath(path))
    return forms


@dataclass(frozen=True)
class View:
    """The bwrap options of the tool layer and its covers, and the covers to make read-only once
    everything else is bound inside them."""

    argv: list[str] = field(default_factory=list)
    covers: list[str] = field(default_factory=list)


def tool_view(
    env: Mapping[str, str],
    *,
    secret: Sequence[Path] = (),
    private: Sequence[Path] = (),
    tools: Sequence[Path] = (),
) -> View:
    """bwrap options for the tools the process needs, with the covers over what must stay out.

    ``secret``: paths never shown (see the module notes); ``private``: covered, with the tool
    folders inside shown again; ``tools``: further folders to show on purpose (a CLI's install,
    folders the user asked for).

    Working the view out takes tens of milliseconds (every path resolved, every cover checked
    against every shown folder), and every sandboxed process of a run asks for the same few
    views; so a view is remembered along with what it was worked out from: the values asked
    with, the registered results folders, and the state (kind, inode, links) of each path
    named, each PATH folder and toolchain home (with its modification time: a program added
    there can bring a folder). Any change there works the view out again.
    """
    named = [*map(str, secret), *map(str, private), *map(str, tools)]
    folders = [entry for entry in env.get("PATH", "").split(os.pathsep) if os.path.isabs(entry)]
    folders += [env[name] for name in _TOOLCHAIN_VARIABLES if os.path.isabs(env.get(name, ""))]
    key = (
        tuple(named),
        len(secret),
        len(private),
        tuple(_path_state(p, with_time=False) for p in named),
        tuple(_path_state(p, with_time=True) for p in folders),
        tuple(registered_results_folders()),
    )
    with _VIEWS_LOCK:
        known = _VIEWS.get(key)
        working = _WORKING_OUT.setdefault(key, threading.Lock()) if known is None else None
    if working is not None:
        # One thread works a view out while the others asking for the same one wait: the
        # first sandboxed launches of a run all ask at once, and each would walk the tool
        # folders again. Different views are worked out side by side.
        with working:
            with _VIEWS_LOCK:
                known = _VIEWS.get(key)
            if known is None:
                known = _work_out_view(env, secret=secret, private=private, tools=tools)
                with _VIEWS_LOCK:
                    if len(_VIEWS) >= _VIEWS_KEPT:
                        _VIEWS.pop(next(iter(_VIEWS)))
                    _VIEWS[key] = known
                    _WORKING_OUT.pop(key, None)
    assert known is not None
    return View(list(known.argv), list(known.covers))


_VIEWS: dict[tuple[object, ...], View] = {}
_VIEWS_LOCK = threading.Lock()
_WORKING_OUT: dict[tuple[object, ...], threading.Lock] = {}
_VIEWS_KEPT = 64


def _path_state(path: str, *, with_time: bool) -> tuple[object, ...]:
    """What a view depends on of one path: whether it exists, its kind and identity, where a
    link points (a cover goes where the path resolves) and, for a tool folder, its time."""
    try:
        info = os.lstat(path)
    except OSError:
        return (path, None)
    target = os.path.realpath(path) if stat.S_ISLNK(info.st_mode) else None
    resolved = os.stat(path) if target is not None and os.path.exists(path) else info
    mtime = resolved.st_mtime_ns if with_time else 0
    return (path, info.st_mode, info.st_ino, target, resolved.st_ino, mtime)


def _work_out_view(
    env: Mapping[str, str],
    *,
    secret: Sequence[Path] = (),
    private: Sequence[Path] = (),
    tools: Sequence[Path] = (),
) -> View:
    shows = [_Show(p, p, True) for p in (*python_paths(), *map(str, tools))]
    shows = [_Show(_norm(s.source), _norm(s.dest), s.trusted) for s in shows + _path_shows(env)]
    shows = [s for s in dict.fromkeys(shows) if _usable(s)]
    searched = [s.source for s in shows] + [r for r in _SEARCHED_SYSTEM_ROOTS if os.path.isdir(r)]
    secrets = _both_forms([*secret, *registered_results_folders(), *sealed_under(searched)])
    shows = [
        s
        for s in shows
        if s.trusted or not any(is_inside(s.dest, x) or is_inside(s.source, x) for x in secrets)
    ]
    covers = secrets | _both_forms(private)
    visible = _system_bound() + [s.dest for s in shows]
    covers = {
        c
        for c in covers
        if os.path.lexists(c)
        and any(is_inside(c, v) for v in visible)
        and not any(is_inside(root, c) for root in SYSTEM_ROOTS)
    }
    shows = _without_redundant(shows, covers)
    # Outer before inner: a cover lands on the folder shown around it, a tool folder inside a
    # cover is shown again on top of it. At the same path the cover comes last and wins.
    layers: list[tuple[int, int, str, _Show | None]] = [
        (s.dest.count("/"), 0, s.dest, s) for s in shows
    ]
    layers += [(c.count("/"), 1, c, None) for c in covers]
    view = View()
    for _depth, _kind, path, show in sorted(layers, key=lambda item: item[:3]):
        if show is not None:
            view.argv.extend(["--ro-bind", show.source, show.dest])
        elif os.path.isdir(path) and not os.path.islink(path):
            view.argv.extend(["--tmpfs", path])
            view.covers.append(path)
        else:
            view.argv.extend(["--ro-bind", os.devnull, path])
    return view


def _without_redundant(shows: list[_Show], covers: set[str]) -> list[_Show]:
    """Drop a folder shown inside another shown folder unless a cover lies between them."""
    plain = [s.dest for s in shows if s.source == s.dest]
    kept = []
    for show in shows:
        outer = [
            p
            for p in plain
            if p != show.dest and show.source == show.dest and is_inside(show.dest, p)
        ]
        between = any(is_inside(show.dest, c) and is_inside(c, p) for p in outer for c in covers)
        if outer and not between:
            continue
        kept.append(show)
    return kept


def system_argv() -> list[str]:
    """bwrap options that bind the system folders."""
    return [part for op in system_mounts() for part in op]


def shown_folders(
    env: Mapping[str, str],
    *,
    secret: Sequence[Path] = (),
    private: Sequence[Path] = (),
    tools: Sequence[Path] = (),
) -> list[str]:
    """The folders outside the system a process sees read-only (for tests and ``doctor``)."""
    argv = tool_view(env, secret=secret, private=private, tools=tools).argv
    return [
        argv[i + 2]
        for i, part in enumerate(argv)
        if part == "--ro-bind" and argv[i + 1] != os.devnull
    ]
