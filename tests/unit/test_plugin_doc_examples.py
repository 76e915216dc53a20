"""The plugin examples in docs/plugins.md run, and every documented extension imports only from
``harnessdrive`` itself (docs/architecture.md's examples run in test_architecture_examples.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import harnessdrive
from harnessdrive import GraderKind, HarnessEntry, Reporter, VariantSpec, build_report, get_harness

DOCS = Path(__file__).resolve().parents[2] / "docs"


def python_blocks(doc: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / doc).read_text(), flags=re.S)


def imported_modules(code: str) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("doc", ["plugins.md", "architecture.md", "audit.md"])
def test_extension_examples_import_only_from_harnessdrive(doc: str) -> None:
    modules = [module for block in python_blocks(doc) for module in imported_modules(block)]
    assert "harnessdrive" in modules
    assert [m for m in modules if m.startswith("harnessdrive.")] == []


def test_a_module_path_is_reported_by_the_import_reader() -> None:
    code = "from harnessdrive.trial.core import run_job\nimport harnessdrive.protocols.round\n"
    assert imported_modules(code) == ["harnessdrive.trial.core", "harnessdrive.protocols.round"]


def test_every_exported_name_resolves() -> None:
    missing = [name for name in harnessdrive.__all__ if not hasattr(harnessdrive, name)]
    assert missing == []
    for name in ("run_round", "run_job", "WorkerContext", "GradingError"):
        assert name in harnessdrive.__all__


def plugins_doc() -> dict[str, Any]:
    """Every block of docs/plugins.md, in order, in one namespace (the harness section's hook
    names the class the next block defines)."""
    namespace: dict[str, Any] = {"__name__": "plugins_doc"}
    for number, block in enumerate(python_blocks("plugins.md"), start=1):
        exec(compile(block, f"plugins.md block {number}", "exec", dont_inherit=True), namespace)
    return namespace


def test_the_harness_example_registers_and_writes(tmp_path: Path) -> None:
    namespace = plugins_doc()
    (entry,) = namespace["harnessdrive_harnesses"]()
    assert isinstance(entry, HarnessEntry) and entry.name == "scribe"
    harness = entry.factory()
    variant = VariantSpec(harness="scribe", options={"text": "ab", "repeat": 2})
    harness.check_variant(variant)
    with pytest.raises(harnessdrive.UserError, match="txt"):
        harness.check_variant(VariantSpec(harness="scribe", options={"txt": "ab"}))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    # the example reads only these two fields of its AgentRequest
    run = harness.run(SimpleNamespace(variant=variant, workspace=workspace))
    assert run.exit_code == 0 and (workspace / "answer.txt").read_text() == "abab"
    assert get_harness("reference").name == "reference"  # the built-ins are untouched


def test_the_grader_kind_example_grades(tmp_path: Path) -> None:
    (kind,) = plugins_doc()["harnessdrive_grader_kinds"]()
    assert isinstance(kind, GraderKind) and kind.name == "file-equals"
    spec = kind.spec_model.model_validate({"kind": "file-equals", "path": "a", "expected": "42"})
    copy = SimpleNamespace(root=tmp_path)  # the example reads only the copy's root
    (tmp_path / "a").write_text("41")
    assert kind.grade(copy, spec).outcome == "fail"
    (tmp_path / "a").write_text("42")
    assert kind.grade(copy, spec).outcome == "pass"


def test_the_reporter_example_renders() -> None:
    (reporter,) = plugins_doc()["harnessdrive_reporters"]()
    assert isinstance(reporter, Reporter) and reporter.name == "headline"
    assert reporter.render(build_report([])) == build_report([]).headline
