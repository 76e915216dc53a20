"""The layers of docs/architecture.md, held over the import graph of src/harnessdrive.

Every module is read with ``ast`` (nothing is imported), each ``import`` of a harnessdrive
module becomes an edge between two top-level packages, and an edge may only point down the
layers below. Imports inside ``if TYPE_CHECKING:`` count too: a type is knowledge as well.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "src" / "harnessdrive"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("__main__",),
    ("cli",),
    ("demo", "pytest_plugin", "audit"),
    ("running", "mining", "checking", "report"),
    ("executors",),
    ("trial", "testing"),
    ("protocols",),
    ("accounting", "export", "matrix"),
    ("store",),
    ("harbor",),
    ("harnesses", "grading"),
    ("workspace", "proxy", "environments"),
    ("tasks",),
    ("sandbox", "plugins", "transcript", "stats"),
    ("errors", "loopback"),
)
"""Top to bottom. A package imports only packages of lower layers, never one beside it."""

FACADE = "harnessdrive"
"""``harnessdrive/__init__.py``: the public kit, which names everything lazily (a module may
read ``__version__`` from it)."""

NEVER: tuple[tuple[str, str, str], ...] = (
    ("harnessdrive.grading", "harnessdrive.harnesses", "the grader never imports a harness"),
    ("harnessdrive.harnesses", "harnessdrive.grading", "a harness never imports the grader"),
    ("harnessdrive.harnesses", "harnessdrive.store", "a harness never imports the store"),
    ("harnessdrive.trial", "harnessdrive.running", "the trial core never imports the driver"),
    ("harnessdrive.trial", "harnessdrive.executors", "executors build on the trial core"),
    (
        "harnessdrive.protocols",
        "harnessdrive.grading.differential",
        "protocols never import a particular grader kind",
    ),
)
"""Rules stated by name, checked module by module (a prefix matches the module and all below)."""

KNOWN: frozenset[tuple[str, str]] = frozenset(
    {
        # Type-only: the hook specifications declare each registration's type, for a plugin's
        # own type checker (imported under TYPE_CHECKING, never at run time).
        ("harnessdrive.plugins.hookspecs", "harnessdrive.audit.exploits"),
        ("harnessdrive.plugins.hookspecs", "harnessdrive.executors.interface"),
        ("harnessdrive.plugins.hookspecs", "harnessdrive.grading.kinds.base"),
        ("harnessdrive.plugins.hookspecs", "harnessdrive.harnesses.entry"),
        ("harnessdrive.plugins.hookspecs", "harnessdrive.protocols.base"),
        ("harnessdrive.plugins.hookspecs", "harnessdrive.report.renderers"),
        # The report reads pytest sessions through the pytest plugin's own readers.
        ("harnessdrive.report.baseline", "harnessdrive.pytest_plugin.gates"),
        ("harnessdrive.report.baseline", "harnessdrive.pytest_plugin.session_report"),
        ("harnessdrive.report.compare", "harnessdrive.pytest_plugin.gates"),
        ("harnessdrive.report.compare", "harnessdrive.pytest_plugin.session_report"),
    }
)
"""Imports that break a rule today, each named (importer, imported module). The test prints
them; one that no longer occurs must leave this list."""


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.importer}:{self.line} imports {self.imported}"


def module_name(file: Path, root: Path) -> str:
    parts = file.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(root: Path) -> Iterator[Edge]:
    """Every import of a module of ``root``'s package by a module of it, as written."""
    package = root.name
    for file in sorted(root.rglob("*.py")):
        importer = module_name(file, root)
        is_package = file.name == "__init__.py"
        for node in ast.walk(ast.parse(file.read_text(), str(file))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = importer.split(".")[: None if is_package else -1]
                    here = here[: len(here) - node.level + 1]
                    base = ".".join([*here, base] if base else here)
                # ``from a import b``: b is a module of a or a name defined in a
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            else:
                continue
            for target in targets:
                if target.split(".")[0] == package and _exists(root, target):
                    yield Edge(importer, target, node.lineno)


def _exists(root: Path, module: str) -> bool:
    path = root.parent.joinpath(*module.split("."))
    # A folder left holding only __pycache__ after a move is no package.
    return (path.is_dir() and any(path.rglob("*.py"))) or path.with_suffix(".py").is_file()


def top(module: str) -> str:
    """The top-level package (or module) of ``module`` below the root package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def broken(
    edges: Sequence[Edge],
    layers: Sequence[Sequence[str]],
    never: Sequence[tuple[str, str, str]],
) -> list[tuple[Edge, str]]:
    """Each edge that breaks a layer or a named rule, with why."""
    rank = {package: index for index, layer in enumerate(layers) for package in layer}
    found: list[tuple[Edge, str]] = []
    for edge in edges:
        source, target = top(edge.importer), top(edge.imported)
        if FACADE in (edge.importer, edge.imported) or source == target:
            continue
        if source not in rank or target not in rank:
            unplaced = source if source not in rank else target
            found.append((edge, f"package {unplaced} has no layer"))
        elif rank[target] <= rank[source]:
            side = "beside it" if rank[target] == rank[source] else "above it"
            found.append((edge, f"{target} is {side}: imports point down"))
        for importer, imported, why in never:
            if within(edge.importer, importer) and within(edge.imported, imported):
                found.append((edge, why))
    return found


def test_the_layers_of_docs_architecture_hold() -> None:
    edges = list(imports(SOURCE))
    assert len(edges) > 1000  # the reader sees the real code, not an empty tree
    found = broken(edges, LAYERS, NEVER)
    known = [(edge, why) for edge, why in found if (edge.importer, edge.imported) in KNOWN]
    for edge, why in known:
        print(f"known exception: {edge.where} ({why})")
    unknown = [f"{edge.where}: {why}" for edge, why in found if (edge, why) not in known]
    assert not unknown, "\n".join(unknown)
    stale = KNOWN - {(edge.importer, edge.imported) for edge, _ in known}
    assert not stale, f"no longer broken, remove from KNOWN: {sorted(stale)}"


def test_every_package_has_a_layer() -> None:
    packages = {path.stem for path in SOURCE.iterdir() if not path.name.startswith(("_", "."))}
    packages = {name for name in packages if _exists(SOURCE, f"harnessdrive.{name}")}
    placed = {package for layer in LAYERS for package in layer}
    assert packages - placed == set()
    assert len(placed) == sum(len(layer) for layer in LAYERS)  # none placed twice


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "harnessdrive"


def test_a_wrong_import_is_reported(tmp_path: Path) -> None:
    """The checker over a tiny tree: the driver may import the trial core, never the reverse."""
    root = _write(
        tmp_path,
        {
            "harnessdrive/__init__.py": "from harnessdrive.running import driver\n",
            "harnessdrive/running/__init__.py": "",
            "harnessdrive/running/driver.py": "from harnessdrive.trial.core import run_job\n",
            "harnessdrive/trial/__init__.py": "",
            "harnessdrive/trial/core.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from ..running import driver\n"
                "def run_job(): ...\n"
            ),
        },
    )
    layers = (("running",), ("trial",))
    found = broken(list(imports(root)), layers, NEVER)
    assert [(edge.where, why) for edge, why in found] == [
        (
            "harnessdrive.trial.core:3 imports harnessdrive.running",
            "running is above it: imports point down",
        ),
        (
            "harnessdrive.trial.core:3 imports harnessdrive.running",
            "the trial core never imports the driver",
        ),
        (
            "harnessdrive.trial.core:3 imports harnessdrive.running.driver",
            "running is above it: imports point down",
        ),
        (
            "harnessdrive.trial.core:3 imports harnessdrive.running.driver",
            "the trial core never imports the driver",
        ),
    ]


def test_a_sideways_import_and_an_unplaced_package_are_reported(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "harnessdrive/__init__.py": "",
            "harnessdrive/grading/__init__.py": "import harnessdrive.harnesses.base\n",
            "harnessdrive/harnesses/__init__.py": "",
            "harnessdrive/harnesses/base.py": "",
            "harnessdrive/extra.py": "from harnessdrive import grading\n",
        },
    )
    found = broken(list(imports(root)), (("harnesses", "grading"),), NEVER)
    reasons = {(edge.importer, edge.imported, why) for edge, why in found}
    assert reasons == {
        ("harnessdrive.extra", "harnessdrive.grading", "package extra has no layer"),
        (
            "harnessdrive.grading",
            "harnessdrive.harnesses.base",
            "harnesses is beside it: imports point down",
        ),
        (
            "harnessdrive.grading",
            "harnessdrive.harnesses.base",
            "the grader never imports a harness",
        ),
    }


def test_the_correct_tree_passes(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "harnessdrive/__init__.py": "",
            "harnessdrive/running/__init__.py": "from harnessdrive.trial import core\n",
            "harnessdrive/trial/__init__.py": "",
            "harnessdrive/trial/core.py": "from . import __name__ as here\n",
        },
    )
    edges = list(imports(root))
    assert [edge.where for edge in edges] == [
        "harnessdrive.running:1 imports harnessdrive.trial",
        "harnessdrive.running:1 imports harnessdrive.trial.core",
        "harnessdrive.trial.core:1 imports harnessdrive.trial",
    ]
    assert broken(edges, (("running",), ("trial",)), NEVER) == []
