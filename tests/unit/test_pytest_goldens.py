"""Goldens: recorded only when asked, compared facet by facet, and never passing when absent."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harnessdrive.pytest_plugin import (
    CannotEvaluate,
    CaseOutput,
    Count,
    Exact,
    Facet,
    GoldenMismatch,
    Jaccard,
    Ratio,
    Superset,
    Within,
    check_golden,
)
from harnessdrive.pytest_plugin.matrix import Cell
from harnessdrive.store.results import DiffStats, RoundRecord
from harnessdrive.tasks.models import VariantSpec
from tests.trial_results import trial_result


def output(tmp_path: Path, text: str, *, record: bool = False) -> CaseOutput:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "OUTPUT.md").write_text(text)
    return CaseOutput(
        cell=Cell(VariantSpec(harness="noop"), None, 1, 1, "noop"),
        result=trial_result("t", "noop", status="completed", outcome="pass"),
        folder=tmp_path,
        workspace=workspace,
        golden=tmp_path / "goldens" / "basic",
        facts={"record_goldens": record},
    )


def words(out: CaseOutput) -> list[str]:
    return sorted(set(out.read("OUTPUT.md").split()))


FACETS = [
    Facet("title", lambda o: o.read("OUTPUT.md").splitlines()[0], Exact()),
    Facet("words", words, Jaccard(at_least=0.5), why="the same topics"),
    Facet("must", words, Superset()),
    Facet("text", lambda o: o.read("OUTPUT.md"), Ratio(at_least=0.6)),
    Facet("lines", lambda o: o.read("OUTPUT.md").splitlines(), Count(delta=1)),
    Facet("size", lambda o: len(o.read("OUTPUT.md")), Within(10, 200)),
]


def test_goldens_are_recorded_on_request_and_compared_facet_by_facet(tmp_path: Path) -> None:
    good = "# Report\nalpha beta gamma delta\n"
    with pytest.raises(CannotEvaluate, match="record-goldens"):
        check_golden(output(tmp_path, good), FACETS)  # nothing recorded: never a pass

    check_golden(output(tmp_path, good, record=True), FACETS)
    check_golden(output(tmp_path, good), FACETS)
    check_golden(output(tmp_path, "# Report\nalpha beta gamma delta epsilon\n"), FACETS)

    with pytest.raises(GoldenMismatch) as mismatch:
        check_golden(output(tmp_path, "# Other\nzeta\n"), FACETS)
    text = str(mismatch.value)
    verdicts = {
        row.split(" [")[0].strip(): row.split("]: ", 1)[1]
        for row in text.splitlines()[1:]
        if row.startswith("  ") and not row.startswith("    ")
    }
    # Every facet is shown, those within tolerance too, each with its verdict.
    assert list(verdicts) == ["title", "words", "must", "text", "lines", "size"]
    assert [name for name, v in verdicts.items() if v.startswith("differs")] == [
        "title",
        "words",
        "must",
        "text",
    ]
    assert verdicts["lines"] == "within tolerance"
    assert "must [Superset]: differs: missing ['Report', 'alpha', 'beta', 'delta', 'gamma']" in text
    assert "(the same topics)" in text
    # A text facet shows how it differs, line by line.
    assert "    -# Report" in text and "    +# Other" in text


def test_a_facet_the_golden_lacks_cannot_evaluate(tmp_path: Path) -> None:
    check_golden(output(tmp_path, "# Report\n", record=True), FACETS[:1])
    with pytest.raises(CannotEvaluate, match="no facet 'words'"):
        check_golden(output(tmp_path, "# Report\n"), FACETS)


def test_a_mismatch_shows_how_the_files_differ_from_the_recorded_artifact(tmp_path: Path) -> None:
    facets = [Facet("title", lambda o: o.read("OUTPUT.md").splitlines()[0], Exact())]
    recorded = output(tmp_path, "# Report\nkept line\nold line\n", record=True)
    changed_file = RoundRecord(status="completed", diff=DiffStats(paths=("OUTPUT.md",)))
    written = trial_result("t", "noop", status="completed", outcome="pass", rounds=[changed_file])
    check_golden(replace(recorded, result=written), facets)
    assert (tmp_path / "goldens" / "basic" / "artifact" / "OUTPUT.md").is_file()

    changed = output(tmp_path, "# Changed\nkept line\nnew line\n")
    with pytest.raises(GoldenMismatch) as mismatch:
        check_golden(replace(changed, result=written), facets)
    text = str(mismatch.value)
    assert "artifact (the files the golden was recorded from):" in text
    assert "changed: OUTPUT.md" in text
    assert "      -old line" in text and "      +new line" in text
