"""``show`` never crashes on a stored trial, however hostile its files: corrupt results, huge
reports, odd encodings, folders and links where files belong."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessdrive.report.show import trial_view
from harnessdrive.store.paths import TrialPaths
from tests.show_sweep import show_problems
from tests.trial_results import trial_result

JUNIT_HEAD = b'<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite>'
FAILING = b'<testcase classname="t" name="bad"><failure message="no">out</failure></testcase>'


def deep(name: str) -> Callable[[Path], None]:
    def spoil(root: Path) -> None:
        (root / name).write_bytes(b"[" * 200_000)

    spoil.__name__ = f"deep_{name.replace('.', '_')}"
    return spoil


def huge_junit(root: Path) -> None:
    with (root / "junit-tests.xml").open("wb") as handle:
        handle.write(JUNIT_HEAD + FAILING)
        handle.write((b"<testcase name='" + b"x" * 1000 + b"'/>") * 6_000)  # past what show reads


def cut_junit(root: Path) -> None:
    (root / "junit-tests.xml").write_bytes(JUNIT_HEAD + FAILING + b"<testcase name='half")


def odd_encoding(root: Path) -> None:
    declared = b'<?xml version="1.0" encoding="shift_jis"?><testsuite>' + FAILING
    (root / "junit-tests.xml").write_bytes(declared + b"</testsuite>")


def folders_for_files(root: Path) -> None:
    for name in ("junit-tests.xml", "prompt.md", "transcript.json", "diff.patch", "cost.json"):
        (root / name).mkdir()


def links_out(root: Path) -> None:
    for name in ("junit-tests.xml", "prompt.md", "transcript.json", "diff.patch", "cost.json"):
        os.symlink("/etc/passwd", root / name)


def binary_everywhere(root: Path) -> None:
    for name in ("prompt.md", "transcript.json", "diff.patch", "cost.json", "grade-tests.log"):
        (root / name).write_bytes(bytes(range(256)) * 100)


def corrupt_result(root: Path) -> None:
    (root / "result.json").write_bytes(b'{"trial_id": ' + b"[" * 100_000)


def wrong_types(root: Path) -> None:
    (root / "result.json").write_text('{"trial_id": 5, "rounds": "many"}')


def overflowing_numbers(root: Path) -> None:
    (root / "cost.json").write_text('{"usd": ' + "9" * 5000 + ', "calls": [{"usd": 1e999}]}')
    (root / "transcript.json").write_text('{"events": [{"kind": "message", "text": 1e999}]}')


HOSTILE = [
    deep("transcript.json"),
    deep("cost.json"),
    huge_junit,
    cut_junit,
    odd_encoding,
    folders_for_files,
    links_out,
    binary_everywhere,
    corrupt_result,
    wrong_types,
    overflowing_numbers,
]


@pytest.mark.parametrize("spoil", HOSTILE, ids=lambda f: getattr(f, "__name__", "deep"))
def test_show_shows_or_refuses_in_a_line_whatever_the_folder_holds(
    tmp_path: Path, spoil: Callable[[Path], None]
) -> None:
    paths = TrialPaths(tmp_path / "trials" / "s" / "t" / "codex" / "r1")
    paths.root.mkdir(parents=True)
    result = trial_result("t", "codex", status="completed", outcome="fail")
    paths.result.write_text(result.to_json())
    spoil(paths.root)
    assert show_problems(paths.root) == []


def test_a_report_declaring_an_odd_encoding_or_cut_short_still_shows_what_it_can(
    tmp_path: Path,
) -> None:
    paths = TrialPaths(tmp_path / "trial")
    paths.root.mkdir()
    result = trial_result("t", "codex", status="completed", outcome="fail")
    paths.result.write_text(result.to_json())
    cut_junit(paths.root)
    assert [t.name for t in trial_view(paths).failing_tests] == ["t::bad"]
    odd_encoding(paths.root)
    assert trial_view(paths).failing_tests == ()
