"""``show``: a complete header (model, effort, duration, tokens, turns, cost), test counts for
every trial (passing ones too), each tool result's excerpt, a command's output once, and each
failing assertion once."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.report.show import trial_view
from harnessdrive.report.show_text import render_trial
from harnessdrive.store.paths import TrialPaths
from harnessdrive.testing.suites import write_suite
from harnessdrive.transcript.models import Event, Transcript
from tests.conftest import add_task
from tests.trial_results import trial_folder


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("show")
    suite = write_suite(parent, [add_task("add")], name="suite")
    folder = parent / "results"
    argv = ["run", str(suite), "-H", "noop,reference", "--sandbox", "none", "--results"]
    assert run_cli([*argv, str(folder)]) == 0
    return folder


def shown(results: Path, variant: str) -> str:
    return render_trial(trial_view(TrialPaths(trial_folder(results, f"suite/add/{variant}/r1"))))


def test_a_passing_trial_shows_its_test_counts_time_and_tokens(results: Path) -> None:
    header = shown(results, "reference").split("== Prompt")[0]
    assert "\n  tests: hidden 3 of 3 passed\n" in header
    assert " in all; 0 tokens over 0 model calls; $0.0000" in header
    assert "\n  model not recorded\n" in header


def test_a_failing_assertion_is_shown_once(results: Path) -> None:
    text = shown(results, "noop")
    assert "tests: hidden 0 of 3 passed (3 failed)" in text
    failing = text.split("== Failing tests")[1].split("\n== ")[0]
    # junit's message repeats pytest's E lines: each assertion is printed once.
    assert failing.count("assert 0 == 2") == 1, failing
    assert failing.count("where 0 = add(1, 1)") == 1, failing
    assert failing.count("FAILED tests.test_visible::test_small") == 1


def test_tool_results_show_an_excerpt_and_a_command_its_output_once(
    results: Path, tmp_path: Path
) -> None:
    folder = trial_folder(results, "suite/add/reference/r1")
    events = (
        Event(kind="tool_call", text="Read", data={"input": {"file_path": "calc.py"}, "id": "r"}),
        Event(kind="tool_result", text="Read", data={"output": "1\tdef add(a, b):", "id": "r"}),
        Event(kind="tool_call", text="Bash", data={"input": {"command": "pytest"}, "id": "b"}),
        Event(kind="tool_result", text="Bash", data={"output": "1 passed in 0.1s", "id": "b"}),
        Event(kind="command", text="pytest", data={"exit_code": 0, "output": "1 passed in 0.1s"}),
    )
    copy = tmp_path / "trial"
    copy.mkdir()
    for name in ("result.json", "prompt.md"):
        (copy / name).write_bytes((folder / name).read_bytes())
    (copy / "transcript.json").write_text(Transcript(events=events).model_dump_json())
    text = render_trial(trial_view(TrialPaths(copy)))
    assert "[tool result] Read\n  | 1\tdef add(a, b):" in text
    assert text.count("1 passed in 0.1s") == 1
    assert "[command] $ pytest  -> exit 0" in text
