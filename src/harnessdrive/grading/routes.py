"""Tamper checks for the ways a test runner loads code or settings from the working tree.

The launcher (``boot/hdrun.py``) keeps the grading run from loading most of them; a change that
plants one is still a sign of intent and makes the outcome ``tampered``:

- ``runner-shadow``: a module or package that would stand in for the test runner, one of its
  plugins or the standard library in a folder that is on ``sys.path`` during a test run;
- ``package-metadata``: installed-package metadata (``*.dist-info``, ``entry_points.txt``,
  ``*.egg-link``) that could register a runner plugin;
- ``test-config``: node's and npm's settings that decide what a test command loads.
"""

from __future__ import annotations

import posixpath
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

from harnessdrive.errors import AgentDataError
from harnessdrive.grading import hostile
from harnessdrive.grading.verdict import Finding
from harnessdrive.tasks.globs import matches
from harnessdrive.workspace.changes import Changes, FileChange

RUNNER_MODULES = frozenset(
    {"pytest", "_pytest", "py", "pluggy", "iniconfig", "unittest", "xmlrunner", "nose", "nose2",
     "exceptiongroup", "tomli", "colorama", "pygments", "packaging"}
)  # fmt: skip
# Standard-library names that no runner imports and that people use for scripts of their own.
_HARMLESS_STDLIB = frozenset({"test", "this", "antigravity", "idlelib", "turtledemo", "__hello__"})
STDLIB_MODULES = frozenset(sys.stdlib_module_names) - _HARMLESS_STDLIB
_MODULE_FILE = re.compile(r"^(?P<name>[A-Za-z_]\w*)(\.[\w-]+)?\.(py|pyc|pyw|so|pyd)$")
NODE_CONFIG_FILES = (
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    "bunfig.toml",
    "node.config.json",
    ".mocharc*",
    "jest.config.*",
    "vitest.config.*",
    "ava.config.*",
)
# package.json keys that decide what a test command runs or loads.
_PACKAGE_KEYS = ("jest", "mocha", "ava", "c8", "nyc", "vitest")
_PACKAGE_SCRIPTS = ("test", "pretest", "posttest")


@dataclass(frozen=True)
class TreeChange:
    present: frozenset[str]
    """Paths the change adds or modifies."""
    deleted: frozenset[str]

    @classmethod
    def of(cls, changes: Changes) -> TreeChange:
        gone = frozenset(c.path for c in changes.files if c.kind == "deleted")
        return cls(frozenset(c.path for c in changes.files) - gone, gone)


def needs_content(change: FileChange) -> bool:
    name = posixpath.basename(change.path)
    return name in ("package.json", "entry_points.txt")


def route_findings(
    change: FileChange,
    new: bytes,
    read_base: Callable[[str], bytes | None],
    tree: TreeChange,
) -> list[Finding]:
    """Findings for one added or modified file of the change ``tree``."""
    path = change.path
    name = posixpath.basename(path)
    found: list[Finding] = []
    shadowed = _shadowed_module(path, read_base, tree)
    if shadowed:
        found.append(
            Finding(code="runner-shadow", path=path, detail=f"stands in for the module {shadowed}")
        )
    parts = path.split("/")
    if any(p.endswith((".dist-info", ".egg-info", ".egg")) for p in parts[:-1]) or name.endswith(
        ".egg-link"
    ):
        found.append(
            Finding(code="package-metadata", path=path, detail="installed-package metadata")
        )
    elif name == "entry_points.txt" and b"pytest11" in new:
        found.append(
            Finding(code="package-metadata", path=path, detail="registers a pytest plugin")
        )
    if matches(name, NODE_CONFIG_FILES):
        found.append(Finding(code="test-config", path=path, detail=f"{name} {change.kind}"))
    elif name == "package.json" and _package_settings(read_base(path)) != _package_settings(new):
        found.append(
            Finding(code="test-config", path=path, detail="test settings in package.json changed")
        )
    return found


def _shadowed_module(
    path: str, read_base: Callable[[str], bytes | None], tree: TreeChange
) -> str | None:
    folder, _, file = path.rpartition("/")
    found = _MODULE_FILE.match(file)
    if found is None:
        return None
    module = found["name"]
    if module == "__init__":
        folder, _, module = folder.rpartition("/")
    if not module or _is_package(folder, read_base, tree):
        return None
    if module in RUNNER_MODULES or module.startswith(("pytest_", "_pytest")):
        return module
    # The standard library is shadowed from the folders that are on sys.path in a test run:
    # the root, ``src`` and the test folders pytest puts there.
    depth = folder.count("/") + 1 if folder else 0
    return module if module in STDLIB_MODULES and depth <= 1 else None


def _is_package(folder: str, read_base: Callable[[str], bytes | None], tree: TreeChange) -> bool:
    if not folder:
        return False
    init = f"{folder}/__init__.py"
    if init in tree.deleted:
        return False
    return init in tree.present or read_base(init) is not None


def _package_settings(content: bytes | None) -> object:
    if content is None:
        return None
    try:
        data = hostile.load_json(content, "package.json")
    except AgentDataError:
        return ("unparsable", hostile.digest(content))
    if not isinstance(data, dict):
        return ("not an object", content)
    raw = data.get("scripts")
    scripts = raw if isinstance(raw, dict) else {}
    return (
        {key: data.get(key) for key in _PACKAGE_KEYS},
        {key: scripts.get(key) for key in _PACKAGE_SCRIPTS},
    )
