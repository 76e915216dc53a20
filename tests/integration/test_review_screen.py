"""``harnessdrive review``: the diff first with the test summary and the place in the queue,
keys listed, a pager for long screens, and a decision that flips one already recorded only when
confirmed."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.report.review_screen import Terminal, diff_lines
from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results folder with two passing trials (two repetitions of the reference)."""
    root = tmp_path_factory.mktemp("review")
    task = add_task(prompt="Make add add.")
    suite = write_suite(root, [task])
    results = root / "results"
    argv = ["run", str(suite), "-H", "reference", "--repeat", "2", "--sandbox", "none"]
    assert run_cli([*argv, "--results", str(results)]) == 0
    return results


@pytest.fixture
def results(recorded: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "results"
    shutil.copytree(recorded, copy)
    return copy


def _review(results: Path, answers: str, *argv: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    return run_cli(["review", *argv, "--results", str(results)])


def test_each_screen_leads_with_its_place_the_tests_and_the_diff(
    results: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    capsys.readouterr()
    assert _review(results, "?\ns\nq\n", monkeypatch=monkeypatch) == 0
    out = capsys.readouterr().out
    first, second = out.split("Review 1 of 2: ")[1].split("Review 2 of 2: ")
    assert first.startswith("add · reference r1") and second.startswith("add · reference r2")
    lines = first.splitlines()
    assert lines[2].startswith("  tests: hidden 3 of 3 passed")
    diff = next(i for i, line in enumerate(lines) if line.startswith("diff --git"))
    keys = next(i for i, line in enumerate(lines) if "[a]ccept" in line)
    assert diff < keys and "+    return a + b" in lines[diff:keys]
    # "?" lists every key with what it does.
    for key, what in (("a", "accept"), ("v", "view the whole trial"), ("q", "quit")):
        assert f"  {key}  {what}" in first
    assert "\x1b[" not in out  # not a terminal: no colour
    assert "Reviewed 0 of 2 waiting passes." in out


def test_view_shows_the_whole_trial_and_the_decision_is_then_asked_again(
    results: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    capsys.readouterr()
    assert _review(results, "v\na\nlooks right\nq\n", monkeypatch=monkeypatch) == 0
    out = capsys.readouterr().out
    assert "== Prompt" in out and "Make add add." in out
    assert "Reviewed 1 of 2 waiting passes." in out
    (review,) = [json.loads(p.read_text()) for p in results.glob("trials/**/review.json")]
    assert (review["decision"], review["note"]) == ("accepted", "looks right")


def test_a_decision_that_flips_a_recorded_one_is_confirmed_first(
    results: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    trial = "add/reference/r1"
    assert _review(results, "", trial, "--accept", monkeypatch=monkeypatch) == 0
    (file,) = results.glob("trials/**/r1/review.json")
    # Given on the command line, a flip needs --yes.
    capsys.readouterr()
    assert _review(results, "", trial, "--reject", monkeypatch=monkeypatch) == 2
    error = capsys.readouterr().err
    assert "was accepted on" in error and "--yes" in error
    assert json.loads(file.read_text())["decision"] == "accepted"
    # Asked on its screen, the reviewer confirms; "n" keeps the decision.
    assert _review(results, "r\nbad\nn\n", trial, monkeypatch=monkeypatch) == 0
    out = capsys.readouterr().out
    assert "It is accepted" in out and "Change it to rejected? [y/N]" in out
    assert "still accepted" in out and json.loads(file.read_text())["decision"] == "accepted"
    assert _review(results, "r\nbad\ny\n", trial, monkeypatch=monkeypatch) == 0
    assert json.loads(file.read_text())["decision"] == "rejected"
    assert _review(results, "", trial, "--accept", "--yes", monkeypatch=monkeypatch) == 0
    assert json.loads(file.read_text())["decision"] == "accepted"


def test_the_diff_is_coloured_on_a_terminal_and_its_own_escapes_are_not() -> None:
    diff = "diff --git a/x b/x\n@@ -1 +1 @@\n-old\n+new \x1b[2J\x1b]0;owned\x07\n"
    lines = diff_lines(diff, colour=True)
    assert lines[2] == "\x1b[31m-old\x1b[0m"
    assert lines[3].startswith("\x1b[32m+new \\x1b[2J\\x1b]0;owned\\x07")
    # Every escape left is one of ours: a colour, then a reset.
    escapes = re.findall("\x1b[^m]*m?", "".join(lines))
    assert escapes and all(re.fullmatch("\x1b\\[\\d+m", e) for e in escapes)
    assert diff_lines(diff, colour=False)[2] == "-old"


def test_a_screen_longer_than_the_window_goes_through_the_pager(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LINES", "10")
    paged: list[str] = []

    def pager(text: str) -> bool:
        paged.append(text)
        return True

    out = io.StringIO()
    terminal = Terminal(io.StringIO(), out, pager=pager)
    terminal.show("short\n")
    terminal.show("".join(f"line {n}\n" for n in range(30)))
    assert out.getvalue() == "short\n" and len(paged) == 1 and "line 29" in paged[0]
    # A pager that cannot run leaves the text on the screen.
    fallback = Terminal(io.StringIO(), out, pager=lambda text: False)
    fallback.show("".join(f"row {n}\n" for n in range(30)))
    assert "row 29" in out.getvalue()
