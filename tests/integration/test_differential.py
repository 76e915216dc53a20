"""The demo's differential task end to end: reference, readme-only and naive agents through
``harnessdrive run``, one run asserted many ways (acceptance 1, 3, 4 of the differential work)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.demo import DEMO_SUITE
from tests.sandboxes import require_bwrap

# One worker runs the module, so its shared fixtures are built once (tests/conftest.py).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("differential")]

TASK = DEMO_SUITE / "tasks" / "skiplist"
WRONG_OR_MISSING = {"comments", "braces", "nocase"}  # wrong in the README, or left out


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_bwrap()
    folder = tmp_path_factory.mktemp("differential") / "results"
    argv = ["run", str(TASK), "--harness", "reference,readme-only,naive", "--results", str(folder)]
    assert run_cli(argv) == 0
    return folder


def grading(results: Path, variant: str) -> dict[str, Any]:
    (path,) = [
        p for p in results.rglob("result.json") if json.loads(p.read_text())["harness"] == variant
    ]
    result = json.loads(path.read_text())
    return result["rounds"][-1]["grading"]


def task_function(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"skiplist_{name}", TASK / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def rates(verdict: dict[str, Any]) -> dict[str, float]:
    return {
        name.split(".")[1]: value
        for name, value in verdict["metrics"].items()
        if name.startswith("rule.") and name.endswith(".rate")
    }


def test_reference_scores_every_case(results: Path) -> None:
    verdict = grading(results, "reference")
    assert (verdict["outcome"], verdict["score"]) == ("pass", 1.0)
    assert set(rates(verdict).values()) == {1.0}
    assert verdict["grader"]["kind"] == "differential"
    assert verdict["details"]["counterexamples"] == []


def test_readme_only_fails_exactly_the_buckets_of_rules_the_readme_gets_wrong(
    results: Path,
) -> None:
    verdict = grading(results, "readme-only")
    found = rates(verdict)
    assert verdict["outcome"] == "fail"
    assert found["base"] == 1.0  # what the README documents rightly, it does
    # Every case of a rule's bucket measures that rule alone, so a rule done wrong scores 0 on
    # its bucket and nothing else moves it.
    assert found == {"base": 1.0, **dict.fromkeys(WRONG_OR_MISSING, 0.0)}


def test_naive_scores_low(results: Path) -> None:
    verdict = grading(results, "naive")
    assert verdict["score"] < 0.5 and verdict["outcome"] == "fail"


def test_every_failing_readme_only_case_shrinks_to_a_tagged_minimal_counterexample(
    results: Path,
) -> None:
    verdict = grading(results, "readme-only")
    failing = verdict["metrics"]["cases"] - verdict["metrics"]["cases_passed"]
    examples = verdict["details"]["counterexamples"]
    assert len(examples) == failing  # every failing case, not a sample
    readme_only = task_function("agents/readme-only/skiplist/rules.py", "skipped")
    oracle = task_function("oracle/skiplist_oracle.py", "answer")
    for example in examples:
        case = example["input"]
        # One pattern and one file show each rule; a comment after a "!" needs the pattern
        # it re-includes from as well.
        assert example["size_after"] <= 3 and example["size_after"] <= example["size_before"]
        assert set(example["rules"]) & WRONG_OR_MISSING, example
        assert readme_only(case) == example["actual"] != example["expected"] == oracle(case)
        for part in ("patterns", "files"):  # 1-minimal: any deletion makes them agree
            for n in range(len(case[part])):
                smaller = {**case, part: case[part][:n] + case[part][n + 1 :]}
                assert readme_only(smaller) == oracle(smaller), (example, smaller)
    broken = {rule for example in examples for rule in example["rules"]}
    assert broken == WRONG_OR_MISSING
    assert verdict["metrics"]["minimiser_oracle_calls"] > 0


def test_false_claims_are_recorded_as_false(results: Path) -> None:
    verdict = grading(results, "readme-only")
    kinds = {claim["kind"]: claim["holds"] for claim in verdict["claims"]}
    assert kinds == {"matches-reference": False, "tests-pass": False}
    metrics = verdict["metrics"]
    assert (metrics["claims_made"], metrics["claims_true"], metrics["claims_false"]) == (2, 0, 2)
    naive = grading(results, "naive")["claims"]
    assert [(c["kind"], c["subject"], c["holds"]) for c in naive] == [
        ("handles-rule", "braces", False)
    ]


def test_the_scoreboard_shows_per_rule_scores_and_grouped_counterexamples(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert run_cli(["report", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert "Per-rule scores" in out
    table = out[out.index("Per-rule scores") :]
    header = next(row for row in table.splitlines() if "braces" in row)
    line = next(row for row in table.splitlines() if "readme-only" in row)
    cells = dict(
        zip(
            [c.strip() for c in header.split("┃")],
            [c.strip() for c in line.split("│")],
            strict=True,
        )
    )
    assert (cells["base"], cells["braces"], cells["nocase"]) == ("100%", "0%", "0%")
    assert "skiplist/readme-only: breaks braces" in out
    assert "Claims in the agents' final messages" in out
