"""What a bubblewrap sandbox shows: the system read-only, the tools it needs, nothing of ours.

The view is an allowlist. The system folders are bound read-only; so are the Python that runs
our commands (a venv with its site-packages, wherever it lives) and the toolchains the
environment names (each PATH folder, with its prefix when it is a ``bin`` folder, and homes such
as ``CARGO_HOME``). Paths that must stay out of sight but lie under something bound (a suite kept
in /opt, say) are covered by an empty folder; tools inside such a path are bound again on top.
"""

from __future__ import annotations

import functools
import os
import site
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import harnessdrive

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
_TOOLCHAIN_VARIABLES = (
    "CARGO_HOME",
    "RUSTUP_HOME",
    "PYENV_ROOT",
    "NVM_DIR",
    "JAVA_HOME",
    "GOROOT",
    "GOPATH",
)
_BIN_NAMES = ("bin", ".bin", "sbin", "shims")


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
        *site.getsitepackages(),
    ]
    if site.ENABLE_USER_SITE and site.USER_SITE:
        candidates.append(site.USER_SITE)
    return tuple(candidates)


def tool_paths(env: Mapping[str, str]) -> list[str]:
    """Folders outside the system that the process's tools live in, outermost first."""
    candidates: list[str] = list(python_paths())
    for entry in env.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        folder = _norm(entry)
        name = os.path.basename(folder)
        parent = os.path.dirname(folder)
        candidates.append(parent if name in _BIN_NAMES and parent != "/" else folder)
    for name in _TOOLCHAIN_VARIABLES:
        value = env.get(name)
        if value and os.path.isabs(value):
            candidates.append(value)
    return outermost(p for p in candidates if _shown_as_tool(p))


def _shown_as_tool(path: str) -> bool:
    path = _norm(path)
    if path == "/" or not os.path.isdir(path):
        return False
    if any(is_inside(path, root) for root in SYSTEM_ROOTS):
        return False  # already visible
    # Never a folder that holds the system folders themselves.
    return not any(is_inside(root, path) for root in SYSTEM_ROOTS)


def outermost(paths: Iterable[str]) -> list[str]:
    """Sorted, deduplicated, without paths inside another one of them."""
    kept: list[str] = []
    for path in sorted({_norm(p) for p in paths}):
        if not any(is_inside(path, k) for k in kept):
            kept.append(path)
    return kept


def system_argv() -> list[str]:
    """bwrap options that bind the system folders."""
    return [part for op in system_mounts() for part in op]


def tools_argv(env: Mapping[str, str], hidden: Sequence[Path]) -> list[str]:
    """bwrap options for the tools the process needs, then covers over what must stay hidden.

    Comes after the fresh /tmp, so a toolchain kept under the host's /tmp stays visible.
    """
    argv: list[str] = []
    tools = tool_paths(env)
    for path in tools:
        argv += ["--ro-bind", path, path]
    bound = [op[2] for op in system_mounts() if op[0] == "--ro-bind"] + tools
    for path in outermost(_norm(h) for h in hidden):
        if not any(is_inside(path, b) for b in bound) or not os.path.exists(path):
            continue  # not visible anyway
        if any(is_inside(root, path) for root in SYSTEM_ROOTS):
            continue  # would hide the system itself (a run started from /usr, say)
        if os.path.isdir(path):
            argv += ["--tmpfs", path]
        else:
            argv += ["--ro-bind", os.devnull, path]
        for tool in tools:
            if is_inside(tool, path) and tool != path:
                argv += ["--ro-bind", tool, tool]
    return argv
