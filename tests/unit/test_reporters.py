"""Report renderers are registered through the harnessdrive_reporters hook and found by name:
``report --format NAME`` (``--json`` is ``--format json``); the markdown one keeps the
scoreboard's tables and lets no recorded text add markup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.errors import UserError
from harnessdrive.report.markdown import render_markdown
from harnessdrive.report.renderers import Reporter, reporter, reporters
from harnessdrive.report.scoreboard import build_report
from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task
from tests.trial_results import trial_result


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("recorded")
    suite = write_suite(parent, [add_task("t"), add_task("u")], name="r")
    folder = parent / "results"
    argv = ["run", str(suite), "-H", "noop,reference", "--sandbox", "none", "--results"]
    assert run_cli([*argv, str(folder)]) == 0
    return folder


def printed(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert run_cli(argv) == 0
    return capsys.readouterr().out


def test_the_built_in_formats_are_registered_and_found_by_name() -> None:
    found = reporters()
    assert list(found)[:3] == ["text", "json", "markdown"]
    assert all(isinstance(item, Reporter) for item in found.values())
    assert reporter("markdown") == found["markdown"]
    with pytest.raises(UserError, match=r"unknown report format 'jsn' \(did you mean 'json'\?\)"):
        reporter("jsn")


def test_report_formats_print_the_same_report(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = ["--results", str(results)]
    assert printed(["report", *where, "--format", "text"], capsys) == printed(
        ["report", *where], capsys
    )
    as_json = printed(["report", *where, "--format", "json"], capsys)
    assert as_json == printed(["report", *where, "--json"], capsys)
    assert json.loads(as_json)["harnesses"][0]["variant"] == "reference"
    markdown = printed(["report", *where, "--format", "markdown"], capsys).splitlines()
    assert "### Harnesses, ranked by the mean per-task pass rate" in markdown
    rows = [line for line in markdown if line.startswith("| ")]
    assert rows[1].startswith("| 1 | reference | builtin | 2 of 2 | 100% |")
    assert rows[2].startswith("| 2 | noop | builtin | 0 of 2 | 0% |")
    assert "| t | pass | fail |" in markdown and "| u | pass | fail |" in markdown


def test_an_unknown_format_is_one_line_and_exit_2(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for extra in (["--format", "mardown"], ["--json", "--format", "markdown"]):
        assert run_cli(["report", "--results", str(results), *extra]) == 2
        out = capsys.readouterr()
        assert len(out.err.strip().splitlines()) == 1 and out.out == ""
        assert "did you mean 'markdown'" in out.err or "two formats" in out.err


def test_recorded_text_cannot_add_markdown() -> None:
    report = build_report(
        [trial_result("a", "noop", status="completed", outcome="fail", run_id="r")],
        run_id="r",
        suite="s",
    )
    hostile = "bad | cell\n# Heading <img src=x> [link](http://x) `code` *b*"
    broken = report.harnesses[0].model_copy(update={"first_error": hostile, "could_not_run": 1})
    report = report.model_copy(
        update={"could_not_run": (broken,), "notes": ("1. not a list\n---", "# no heading")}
    )
    lines = render_markdown(report).splitlines()
    table = [line for line in lines if line.startswith("| noop |")]
    [row] = table  # the could-not-run row
    # Every pipe in the error is escaped: the row keeps its four cells.
    assert row.count("|") - row.count("\\|") == 5
    assert "\\# Heading \\<img src=x\\> \\[link\\](http://x) \\`code\\` \\*b\\*" in row
    assert not any(line.startswith(("#", "<")) and not line.startswith("### ") for line in lines)
    assert "\\- 1. not a list" in lines and "\\---" in lines and "\\- \\# no heading" in lines
