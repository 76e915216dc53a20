"""The extension examples in docs/architecture.md are real code: each one runs and registers
what it says it registers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from harnessdrive import (
    ExecutorEntry,
    HarnessEntry,
    Reporter,
    TrialProtocol,
    VariantSpec,
    build_report,
)
from harnessdrive.grading.kinds.base import GraderKind
from harnessdrive.tasks.models import GradeSpec

DOC = Path(__file__).parents[2] / "docs" / "architecture.md"


def examples() -> dict[str, str]:
    text = DOC.read_text()
    found = {}
    for heading, body in re.findall(r"^### (.+?)\n(.*?)(?=^### |\Z)", text, flags=re.M | re.S):
        blocks = re.findall(r"```python\n(.*?)```", body, flags=re.S)
        if blocks:
            found[heading] = blocks[0]
    return found


def run_example(name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"example_{name.split()[-1]}"}
    code = compile(examples()[name], f"architecture.md: {name}", "exec", dont_inherit=True)
    exec(code, namespace)
    return namespace


def test_every_extension_point_has_an_example() -> None:
    assert set(examples()) == {
        "A harness",
        "A grader kind",
        "A protocol",
        "An executor",
        "A report renderer",
    }


@pytest.mark.parametrize(
    ("name", "hook", "kind"),
    [
        ("A harness", "harnessdrive_harnesses", HarnessEntry),
        ("A protocol", "harnessdrive_protocols", TrialProtocol),
        ("An executor", "harnessdrive_executors", ExecutorEntry),
        ("A report renderer", "harnessdrive_reporters", Reporter),
    ],
)
def test_each_example_registers_its_extension(name: str, hook: str, kind: type) -> None:
    registered = run_example(name)[hook]()
    assert len(registered) == 1 and isinstance(registered[0], kind)


def test_the_harness_example_checks_its_options() -> None:
    entry = run_example("A harness")["harnessdrive_harnesses"]()[0]
    harness = entry.factory()
    harness.check_variant(VariantSpec(harness="echo", options={"text": "hi"}))
    with pytest.raises(Exception, match="txet"):
        harness.check_variant(VariantSpec(harness="echo", options={"txet": "hi"}))


def test_the_grader_kind_example_reads_its_table() -> None:
    kind: GraderKind[Any] = run_example("A grader kind")["harnessdrive_grader_kinds"]()[0]
    spec = kind.spec_model.model_validate({"kind": "line-count", "path": "a.py", "most": 3})
    assert isinstance(spec, GradeSpec) and kind.name == "line-count"


def test_the_renderer_example_renders_a_report() -> None:
    reporter = run_example("A report renderer")["harnessdrive_reporters"]()[0]
    assert reporter.render(build_report([])) == "variant,passed,trials\n"
