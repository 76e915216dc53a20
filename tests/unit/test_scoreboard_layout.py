"""The terminal scoreboard fits the width it is printed at: no blank or cut column at 60, 80,
120 and 200 columns, a compact layout below 110, columns empty for every arm left out, piped
output as wide as COLUMNS says, and findings grouped per arm."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from harnessdrive.cli.app import run_cli
from harnessdrive.cli.output import PIPED_WIDTH, piped_width, stdout
from harnessdrive.grading.verdict import Finding, Verdict
from harnessdrive.report.markdown import render_markdown
from harnessdrive.report.render import render_report
from harnessdrive.report.scoreboard import Report, build_report
from harnessdrive.store.results import Cost, DiffStats, Timing, TrialResult
from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task
from tests.trial_results import trial_result

ARMS = [
    f"{harness}+{effort}{'+terse' if treated else ''}"
    for harness in ("claude", "codex")
    for effort in ("min", "high")
    for treated in (False, True)
]
TASKS = ["amount-parsing", "bad-row-errors", "weekly-totals", "top-products", "skiplist"]
FULL_HEADERS = ("#", "Harness", "Version", "Passed", "Rate", "Interval", "Standing", "$/pass")
COMPACT_HEADERS = ("#", "Arm", "Passed", "Rate [interval]", "$/pass", "Verdict")


def _trial(task: str, arm: int, repetition: int) -> TrialResult:
    passed = (arm + repetition + len(task)) % 3 != 0
    finding = Finding(code="protected-path", path="tests/test_x.py", detail="modified")
    return trial_result(
        task,
        ARMS[arm],
        trial_id=f"s/{task}/{ARMS[arm]}/r{repetition}",
        repetition=repetition,
        harness=ARMS[arm].split("+")[0],
        harness_version="2.1.332 (Claude Code)" if arm < 4 else "0.58.0",
        status="completed",
        outcome="pass" if passed else "fail",
        grading=Verdict(
            outcome="pass" if passed else "fail",
            findings=(finding,) if arm == 3 and task == "skiplist" else (),
        ),
        seconds=Timing(agent=95.0, total=120.0),
        diff=DiffStats(lines_added=12 + arm),
        cost=Cost(usd=0.0123 * (arm + 1), source="computed", charged_usd=0.0123 * (arm + 1)),
    )


@pytest.fixture(scope="module")
def matrix() -> Report:
    """2 harnesses x 2 efforts x treatment/control x 5 tasks x 2 repeats."""
    trials = [_trial(t, a, r) for a in range(len(ARMS)) for t in TASKS for r in (1, 2)]
    return build_report(trials)


def printed(report: Report, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, no_color=True)
    console.print(render_report(report))
    return console.file.getvalue()  # type: ignore[attr-defined]


def table_lines(output: str, title: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    table = []
    for line in lines[start + 1 :]:
        if not re.search("[│┃━─]", line):
            break
        table.append(line)
    return table


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split("[│┃]", line)]


def assert_fits(output: str, width: int) -> None:
    assert "…" not in output
    assert max(len(line) for line in output.splitlines()) <= width


@pytest.mark.parametrize("width", [60, 80])
def test_narrow_terminals_get_the_compact_scoreboard_with_nothing_cut(
    matrix: Report, width: int
) -> None:
    output = printed(matrix, width)
    assert_fits(output, width)
    table = table_lines(output, "Harnesses, ranked")
    rule = next(i for i, line in enumerate(table) if "━" in line)
    # A header may wrap over lines; its words are all there.
    heads = [cells(line) for line in table[:rule]]
    header = [" ".join(h[i] for h in heads if h[i]) for i in range(len(heads[0]))]
    assert tuple(header) == COMPACT_HEADERS
    body = [cells(line) for line in table[rule + 1 :]]
    names, rates = ("".join(row[i] for row in body) for i in (1, 3))
    text = "\n".join(table)
    for row in matrix.harnesses:
        # Each arm's name, passes, interval and verdict in full (a name may wrap, never be cut).
        assert row.variant in names
        assert f"{row.passed} of {row.trials}" in text
        assert row.interval is not None
        assert f"[{row.interval.low * 100:.0f}–{row.interval.high * 100:.0f}%]" in rates
        assert any(cell == row.versus_best for line in body for cell in line)
    assert "Version" not in header and "Tokens" not in header


def test_wide_terminals_get_every_column_that_says_something(matrix: Report) -> None:
    output = printed(matrix, 200)
    assert_fits(output, 200)
    table = table_lines(output, "Harnesses, ranked")
    header = [c for c in cells(table[1]) if c]
    assert set(FULL_HEADERS) <= set(header)
    # Nothing timed out, could not run or strayed out of scope: those columns would be 0 only.
    assert not {"Timeouts", "No run", "Out of scope", "Accepted", "Score"} & set(header)
    rows = [cells(line) for line in table if "of 10" in line]
    assert len(rows) == len(ARMS)
    index = cells(table[1]).index("#")
    assert all(row[index] for row in rows), "the rank column is blank"
    version = cells(table[1]).index("Version")
    assert {row[version] for row in rows} == {"2.1.332 (Claude Code)", "0.58.0"}


@pytest.mark.parametrize("width", [120, 140])
def test_between_the_two_the_details_go_before_anything_is_cut(matrix: Report, width: int) -> None:
    output = printed(matrix, width)
    assert_fits(output, width)
    table = table_lines(output, "Harnesses, ranked")
    header = [c for c in cells(table[1]) if c]
    assert {"#", "Harness", "Passed", "Rate", "Interval", "Standing", "$/pass"} <= set(header)
    assert all(cells(line)[1] for line in table if "of 10" in line)
    wide = [c for c in cells(table_lines(printed(matrix, 200), "Harnesses")[1]) if c]
    assert len(header) <= len(wide)


def test_a_task_grid_too_wide_turns_to_one_line_per_task_and_arm(matrix: Report) -> None:
    wide = table_lines(printed(matrix, 200), "Tasks")
    assert all(arm in wide[1] for arm in ARMS)
    narrow = printed(matrix, 80)
    lines = table_lines(narrow, "Tasks")
    assert [c for c in cells(lines[0]) if c] == ["Task", "Arm", "Result"]
    assert sum("skiplist" in line for line in lines) == len(ARMS)


def test_findings_are_grouped_under_their_arm(matrix: Report) -> None:
    output = printed(matrix, 120).splitlines()
    heading = output.index(f"Findings, {ARMS[3]} (2 of 10 trials):")
    assert output[heading + 1].startswith("  - skiplist r1: protected-path tests/test_x.py")
    assert output[heading + 2].startswith("  - skiplist r2: protected-path tests/test_x.py")
    assert sum(line.startswith("Findings, ") for line in output) == 1


def test_markdown_keeps_the_widest_table_and_the_answer_first(matrix: Report) -> None:
    markdown = render_markdown(matrix).splitlines()
    assert markdown[0].startswith(("Best: ", "Tied: ")) and "% of tasks" in markdown[0]
    header = next(line for line in markdown if line.startswith("| \\# |"))
    assert "| Version |" in header and "| Lines |" in header


def test_the_answer_comes_before_the_scoreboard(matrix: Report) -> None:
    output = printed(matrix, 80)
    assert output.index(matrix.headline[:40]) < output.index("Harnesses, ranked")
    assert matrix.headline.startswith(("Best: ", "Tied: "))


def test_piped_output_is_as_wide_as_columns_says() -> None:
    assert piped_width({"COLUMNS": "80"}) == 80
    assert piped_width({}) == PIPED_WIDTH == 120
    assert piped_width({"COLUMNS": "wide"}) == PIPED_WIDTH
    assert piped_width({"COLUMNS": "3"}) == PIPED_WIDTH


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("layout")
    suite = write_suite(parent, [add_task("t"), add_task("u")], name="r")
    folder = parent / "results"
    argv = ["run", str(suite), "-H", "noop,reference", "--sandbox", "none", "--results"]
    assert run_cli([*argv, str(folder)]) == 0
    return folder


@pytest.mark.parametrize("columns", ["80", None])
def test_report_in_a_pipe_fits_columns_or_the_default(
    recorded: Path,
    columns: str | None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    width = int(columns or PIPED_WIDTH)
    assert not stdout().is_terminal and stdout().width == width
    capsys.readouterr()
    assert run_cli(["report", "--results", str(recorded)]) == 0
    output = capsys.readouterr().out
    # In a pipe the tables fit the width and the sentences stay whole lines (a log is grepped).
    tables = [line for line in output.splitlines() if re.search("[│┃━─]", line)]
    assert_fits("\n".join(tables), width)
    assert "…" not in output
    assert any(line.startswith("Rate: ") and len(line) > width for line in output.splitlines())
    table = table_lines(output, "Harnesses, ranked")
    rank = next(cells(line).index("#") for line in table if "#" in line)
    rows = [cells(line) for line in table if " of 2" in line]
    assert [row[rank] for row in rows] == ["1", "2"]
    assert any("reference" in cell for cell in rows[0])
