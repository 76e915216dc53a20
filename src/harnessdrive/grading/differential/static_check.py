"""The candidate's source against an allowlist of modules (never a blocklist).

Starting from the candidate's module, every import is resolved: a module of the repository
itself is read in turn (so a forbidden import cannot hide one module away); anything else must
be on the allowlist, as a module (``re``) or as one name of a module (``os.path``). ``from os
import system`` is thus refused because ``os.system`` is not listed, and so are ``ctypes``,
``multiprocessing``, ``subprocess`` and ``importlib``. Calls that import or run code by name
(``__import__``, ``eval``, ``exec``, ``compile``) and the dunder attributes that reach other
modules' globals are findings too, as are bytecode or native files the candidate would load in
place of source.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

DEFAULT_ALLOWED = frozenset(
    {
        "__future__",
        "abc",
        "bisect",
        "collections",
        "collections.abc",
        "copy",
        "dataclasses",
        "decimal",
        "enum",
        "fnmatch",
        "fractions",
        "functools",
        "heapq",
        "itertools",
        "json",
        "math",
        "operator",
        "os.path",
        "posixpath",
        "re",
        "statistics",
        "string",
        "textwrap",
        "types",
        "typing",
        "unicodedata",
    }
)
FORBIDDEN_CALLS = frozenset({"__import__", "eval", "exec", "compile", "breakpoint", "globals"})
FORBIDDEN_ATTRIBUTES = frozenset(
    {
        "__builtins__",
        "__globals__",
        "__subclasses__",
        "__code__",
        "__loader__",
        "__spec__",
        "__import__",
        "__getattribute__",
        "f_globals",
        "f_back",
        "gi_frame",
    }
)
NAMED_ATTRIBUTE_CALLS = frozenset({"getattr", "setattr", "delattr", "hasattr"})
"""Calls whose attribute name, when computed, could be any of the forbidden ones."""
COMPILED_SUFFIXES = (".pyc", ".so", ".pyd")


@dataclass(frozen=True)
class StaticFinding:
    path: str
    line: int
    detail: str


def check_candidate(
    root: Path, module: str, allowed: Iterable[str] = ()
) -> tuple[tuple[StaticFinding, ...], tuple[str, ...]]:
    """Findings in the candidate's own modules reachable from ``module``, and those modules."""
    allow = DEFAULT_ALLOWED | frozenset(allowed)
    findings: list[StaticFinding] = []
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        source = own_source(root, name)
        if source is None:
            continue
        rel = source.relative_to(root).as_posix()
        for package in _parents(name):  # importing a.b runs a/__init__.py first
            if own_source(root, package) is not None and package not in seen:
                todo.append(package)
        try:
            tree = ast.parse(source.read_bytes(), filename=rel)
        except (SyntaxError, ValueError) as exc:
            findings.append(StaticFinding(rel, 0, f"cannot parse: {exc}"))
            continue
        is_package = source.name == "__init__.py"
        bound: dict[str, str] = {}  # local name -> the module (or module name) it was bound to
        for node in ast.walk(tree):
            for target, line, binds_top in _imports(node, name, is_package):
                if binds_top:
                    bound[target.split(".")[0]] = target.split(".")[0]
                elif isinstance(node, ast.ImportFrom):
                    bound[target.rsplit(".", 1)[-1]] = target
                own, problem = _judge(root, target, allow, binds_top)
                if own is not None:
                    todo.append(own)
                elif problem is not None:
                    findings.append(StaticFinding(rel, line, problem))
            problem = _dynamic(node) or _attribute_module(node, bound, allow)
            if problem is not None:
                findings.append(StaticFinding(rel, getattr(node, "lineno", 0), problem))
    return tuple(sorted(findings, key=lambda f: (f.path, f.line))), tuple(sorted(seen))


def own_source(root: Path, module: str) -> Path | None:
    """The repository's source file of ``module``, if it has one."""
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file() and path.resolve().is_relative_to(root.resolve()):
            return path
    return None


def _compiled(root: Path, module: str) -> Path | None:
    base = root.joinpath(*module.split("."))
    folder = base.parent
    if not folder.is_dir():
        return None
    for path in folder.iterdir():
        if path.name.startswith(base.name + ".") and path.name.endswith(COMPILED_SUFFIXES):
            return path
    return None


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts))]


def _imports(node: ast.AST, current: str, is_package: bool) -> list[tuple[str, int, bool]]:
    """Each fully qualified name an import statement loads, and whether it binds the top-level
    package (``import a.b`` binds ``a``)."""
    if isinstance(node, ast.Import):
        return [(a.name, node.lineno, a.asname is None) for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        package = current.split(".") if is_package else current.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)] if node.level > 1 else package
        base = ".".join([*package, *([base] if base else [])])
    return [(f"{base}.{a.name}" if base else a.name, node.lineno, False) for a in node.names]


def _judge(
    root: Path, target: str, allow: frozenset[str], binds_top: bool
) -> tuple[str | None, str | None]:
    """(own module to read, None), (None, why it is refused), or (None, None) when allowed."""
    parts = target.split(".")
    prefixes = [".".join(parts[:n]) for n in range(1, len(parts) + 1)]
    listed = parts[0] in allow if binds_top else any(p in allow for p in prefixes)
    if listed:
        reached = _module_reached(target, allow)
        return (None, None) if reached is None else (None, reached)
    for prefix in reversed(prefixes):
        if own_source(root, prefix) is not None:
            return prefix, None
        compiled = _compiled(root, prefix)
        if compiled is not None:
            return None, f"loads compiled code {compiled.name} in place of source"
    return None, f"imports {target}, which is not on the allowlist"


def _module_reached(target: str, allow: frozenset[str]) -> str | None:
    """Why ``target`` (an allowed module's name) is refused: it is a module that is not on the
    allowlist, reached as an attribute (``fnmatch.os``); None when it is fine."""
    parts = target.split(".")
    for n in range(2, len(parts) + 1):
        owner, name = ".".join(parts[: n - 1]), parts[n - 1]
        value = getattr(_stdlib_module(owner), name, None)
        if (
            isinstance(value, ModuleType)
            and not _listed(value.__name__, allow)
            and (".".join(parts[:n]) not in allow)
        ):
            return f"reaches the module {value.__name__} as {'.'.join(parts[:n])}"
    return None


def _listed(module: str, allow: frozenset[str]) -> bool:
    parts = module.split(".")
    return any(".".join(parts[:n]) in allow for n in range(1, len(parts) + 1))


def _stdlib_module(name: str) -> ModuleType | None:
    if name.split(".")[0] not in sys.stdlib_module_names:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _attribute_module(node: ast.AST, bound: dict[str, str], allow: frozenset[str]) -> str | None:
    """``name.attr`` on a bound allowed module that reaches a module not on the allowlist."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        module = bound.get(node.value.id)
        # A module not on the allowlist was reported where it was imported.
        if module is not None and _listed(module, allow) and _stdlib_module(module) is not None:
            return _module_reached(f"{module}.{node.attr}", allow)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"getattr", "setattr", "vars", "dir"}
        and node.args
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id in bound
    ):
        return f"calls {node.func.id}() on the module {bound[node.args[0].id]}"
    return None


def _dynamic(node: ast.AST) -> str | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in FORBIDDEN_CALLS
    ):
        return f"calls {node.func.id}()"
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in NAMED_ATTRIBUTE_CALLS
        and len(node.args) >= 2
    ):
        name = node.args[1]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return f"calls {node.func.id}() with a computed name"
        if name.value.startswith("__") or name.value in FORBIDDEN_ATTRIBUTES:
            return f"calls {node.func.id}() for {name.value}"
    if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
        return f"uses .{node.attr}"
    if isinstance(node, ast.Name) and node.id in FORBIDDEN_ATTRIBUTES:
        return f"uses {node.id}"
    return None
