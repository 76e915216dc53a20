"""Export and import again: a suite written as Harbor tasks and imported back grades the same,
and the SWE-bench export passes a schema check written from the 5.0 task-repo description."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessdrive.cli.variants import resolve_variants
from harnessdrive.export.swebench import export_swebench
from harnessdrive.harbor.exporter import export_harbor
from harnessdrive.harbor.importer import ImportOptions, import_harbor
from harnessdrive.mining.mine import MineOptions, mine
from harnessdrive.running.plan import make_plan
from harnessdrive.running.run import RunOptions, execute
from harnessdrive.tasks import load_suite
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task
from tests.images import image_cache, python_image
from tests.swebench_schema import problems

pytestmark = pytest.mark.slow

ARMS = ["reference", "noop", "tamperer"]
BASE_IMAGE = "python:3.12-slim"
LONGEST = "def longest(words):\n    return max(words, key=len) if words else None\n"


@pytest.fixture(autouse=True)
def _test_image_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HARNESSDRIVE_IMAGE_CACHE", str(image_cache() / "unpacked"))
    yield


def outcomes(suite: Path, results: Path) -> dict[tuple[str, str], str]:
    loaded = load_suite(suite)
    plan = make_plan(loaded, resolve_variants(loaded, ARMS), 1)
    summary = execute(plan, RunOptions(results=results, sandbox="bwrap", jobs=2))
    return {(r.task, r.variant_label): r.outcome for r in summary.trials}


def two_tasks(tmp_path: Path) -> Path:
    words = add_task(
        "longest",
        files={"words.py": "def longest(words):\n    return words[0]\n",
               "tests/test_visible.py": "from words import longest\n\n\n"
               "def test_one():\n    assert longest(['a']) == 'a'\n"},
        hidden={"tests/test_hidden.py": "from words import longest\n\n\n"
                "def test_longest():\n    assert longest(['a', 'ccc', 'bb']) == 'ccc'\n\n\n"
                "def test_empty():\n    assert longest([]) is None\n"},
        solution={"words.py": LONGEST},
    )  # fmt: skip
    generated = add_task(
        "generated",
        files={"use.py": "from generated import VALUE\n\n\ndef triple():\n    return VALUE\n",
               "tests/test_visible.py": "def test_nothing():\n    pass\n"},
        hidden={"tests/test_hidden.py": "from use import triple\n\n\n"
                "def test_triple():\n    assert triple() == 9\n"},
        solution={"use.py": "from generated import VALUE\n\n\ndef triple():\n"
                  "    return VALUE * 3\n"},
        setup=["echo 'VALUE = 3' > generated.py"],
    )  # fmt: skip
    return write_suite(tmp_path / "host", [add_task(), words, generated])


def test_a_suite_exported_to_harbor_and_imported_grades_the_same(tmp_path: Path) -> None:
    suite = two_tasks(tmp_path)
    before = outcomes(suite, tmp_path / "results-host")
    assert before[("add", "reference")] == "pass"
    assert before[("longest", "noop")] == "fail"
    assert before[("add", "tamperer")] == "tampered"

    exported = export_harbor(load_suite(suite), tmp_path / "harbor")
    assert exported.refused == [] and sorted(exported.written) == ["add", "generated", "longest"]
    imported = import_harbor(
        tmp_path / "harbor",
        tmp_path / "again",
        ImportOptions(images={BASE_IMAGE: python_image()}),
    )
    assert imported.refused == []
    after = outcomes(tmp_path / "again", tmp_path / "results-image")
    assert after == before
    # The grading now ran the exported verifier inside the image.
    again = load_suite(tmp_path / "again")
    assert {t.spec.grade.kind for t in again.tasks} == {"harbor"}
    assert all(t.spec.environment is not None for t in again.tasks)


def test_a_mined_suite_exported_to_harbor_and_imported_grades_the_same(tmp_path: Path) -> None:
    # A history nobody wrote as tasks: each commit's change and its new tests become a task.
    repo = RepoBuilder(tmp_path / "calc")
    text = "def total(xs):\n    return 0\n\n\ndef largest(xs):\n    return None\n"
    repo.commit("Start", {"calc.py": text, "tests/test_base.py": _unit("Base", "True")})
    text = text.replace("    return 0\n", "    return sum(xs)\n")
    repo.commit("Add total", {"calc.py": text, "tests/test_total.py": _unit(
        "Total", "calc.total([1, 2, 3]) == 6")})  # fmt: skip
    text = text.replace("    return None\n", "    return max(xs) if xs else None\n")
    repo.commit("Add largest", {"calc.py": text, "tests/test_largest.py": _unit(
        "Largest", "calc.largest([2, 5, 1]) == 5 and calc.largest([]) is None")})  # fmt: skip
    repo.checkout()
    repo.close()
    options = MineOptions(
        repo=tmp_path / "calc",
        since="2000-01-01",
        test_command="python3 -m unittest discover -s tests -q",
        validate=True,
        test_timeout=60,
        output=tmp_path / "mined",
    )
    mined = mine(options, sandbox="bwrap", python=sys.executable)
    assert mined.suite is not None and len(load_suite(mined.suite).tasks) == 2
    before = outcomes(mined.suite, tmp_path / "results-host")
    assert {task for task, _ in before} == {t.id for t in load_suite(mined.suite).tasks}
    assert all(before[(task, "reference")] == "pass" for task, _ in before)
    assert all(before[(task, "noop")] == "fail" for task, _ in before)
    exported = export_harbor(load_suite(mined.suite), tmp_path / "harbor")
    assert exported.refused == [] and len(exported.written) == 2
    imported = import_harbor(
        tmp_path / "harbor",
        tmp_path / "again",
        ImportOptions(images={BASE_IMAGE: python_image()}),
    )
    assert imported.refused == []
    assert outcomes(tmp_path / "again", tmp_path / "results-image") == before
    again = load_suite(tmp_path / "again")
    assert {t.spec.grade.kind for t in again.tasks} == {"harbor"}
    assert all(t.spec.environment is not None for t in again.tasks)


def _unit(name: str, check: str) -> str:
    return (
        f"import unittest\n\nimport calc\n\n\nclass {name}(unittest.TestCase):\n"
        f"    def test_it(self):\n        self.assertTrue({check})\n"
    )


def test_swebench_export_passes_the_schema_check_with_a_runs_predictions(
    tmp_path: Path,
) -> None:
    suite = two_tasks(tmp_path)
    loaded = load_suite(suite)
    results = tmp_path / "results"
    plan = make_plan(loaded, resolve_variants(loaded, ["reference", "noop"]), 1)
    execute(plan, RunOptions(results=results, sandbox="bwrap"))
    report = export_swebench(loaded, tmp_path / "sweb", results=results, variant="reference")
    assert report.refused == [] and len(report.written) == 3
    assert problems(tmp_path / "sweb") == []
    lines = [
        json.loads(x) for x in (tmp_path / "sweb" / "predictions.jsonl").read_text().splitlines()
    ]
    assert len(lines) == 3 and all(
        any(t in x["model_patch"] for t in ("a + b", "max(", "VALUE * 3")) for x in lines
    )
    # The check can fail: a broken instance is caught.
    broken = tmp_path / "sweb" / "tasks" / report.written[0]
    (broken / "eval.sh").write_text("#!/bin/bash\npytest\n")
    os.remove(broken / "tests.json")
    found = problems(tmp_path / "sweb")
    assert any("eval.sh" in p for p in found) and any("tests.json" in p for p in found)
