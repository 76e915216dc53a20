"""File names of every kind, from the agent's workspace to ``report --json``, losslessly.

Each name goes through the diff, the grading copy, result.json, the index, the scoreboard (text
and JSON) and back to its raw bytes; nothing on the way may crash or change a byte.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest
from rich.console import Console

from harnessdrive.grading.grader import GradingSetup, grade
from harnessdrive.grading.verdict import Finding
from harnessdrive.report.render import render_report
from harnessdrive.report.scoreboard import build_report
from harnessdrive.sandbox.runner import get_sandbox
from harnessdrive.store.index import dump
from harnessdrive.store.results import DiffStats, TrialResult
from harnessdrive.store.store import Store
from harnessdrive.tasks import load_task
from harnessdrive.tasks.models import VariantSpec
from harnessdrive.testing.suites import write_task
from harnessdrive.workspace.changes import capture_changes
from harnessdrive.workspace.materialize import apply_changes, copy_snapshot
from harnessdrive.workspace.names import name_bytes, name_from_json, shown
from harnessdrive.workspace.snapshot import build_snapshot
from tests.conftest import add_task

# One of each class: raw bytes that are not UTF-8, control characters, names that look like
# options, globs, pathspec magic or shell syntax, quotes and backslashes, the longest name a
# file system takes, a deep path, and Unicode in two normal forms (two different names).
NAMES: dict[str, bytes] = {
    "invalid-utf8": b"bad\xff\xfename.py",
    "lone-continuation": b"\x80start",
    "overlong-utf8": b"over\xc0\xaflong",
    "newline": b"new\nline.txt",
    "tab-and-cr": b"tab\there\r.txt",
    "leading-dash": b"-rf",
    "option": b"--output=evil",
    "spaces": b" lead and trail ",
    "quotes": b'it\'s "quoted".txt',
    "backslash": b"back\\slash\\x41.txt",
    "glob": b"*.py",
    "brackets": b"[ab]?.txt",
    "pathspec-magic": b":(exclude)*",
    "shell": b"$(touch owned);`id`|&.txt",
    "escape-sequence": b"\x1b[31mred\x1b[0m",
    "long-name": b"L" * 255,
    "deep-path": b"/".join([b"d"] * 120) + b"/deep.txt",
    "nfc": "caf\u00e9.txt".encode(),
    "nfd": "cafe\u0301.txt".encode(),
    "nul-looking": b"zero\\u0000ff.txt",
}


def _write(root: Path, raw: bytes, data: bytes) -> None:
    target = os.path.join(os.fsencode(root), raw)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as handle:
        handle.write(data)


def _read(root: Path, raw: bytes) -> bytes:
    with open(os.path.join(os.fsencode(root), raw), "rb") as handle:
        return handle.read()


def _result(paths: tuple[str, ...]) -> TrialResult:
    variant = VariantSpec(harness="command", name="names")
    return TrialResult(
        trial_id="suite/add/names/r1",
        suite="suite",
        task="add",
        task_fingerprint="f",
        variant=variant,
        variant_label=variant.label,
        harness="command",
        repetition=1,
        status="completed",
        outcome="fail",
        started="2026-01-01T00:00:00Z",
        finished="2026-01-01T00:00:01Z",
        diff=DiffStats(files_changed=len(paths), paths=paths),
    )


def test_every_name_class_survives_diff_grading_copy_record_index_and_report(
    tmp_path: Path,
) -> None:
    task = load_task(write_task(tmp_path / "tasks", add_task()))
    snap = build_snapshot(task.repo_path, None, tmp_path / "snap")
    ws = copy_snapshot(snap, tmp_path / "ws")
    contents = {label: f"content of {label}\n".encode() for label in NAMES}
    for label, raw in NAMES.items():
        _write(ws, raw, contents[label])
    # An oversized file under an unusual name is left out by that exact name, nothing else.
    _write(ws, b"big\xff\n*", b"x" * 4096)

    changes = capture_changes(snap, ws, max_file_bytes=1024)
    by_bytes = {name_bytes(c.path): c for c in changes.files}
    assert set(by_bytes) == set(NAMES.values())
    assert all(c.kind == "added" for c in changes.files)
    assert [(name_bytes(i.path), i.code) for i in changes.left_out] == [
        (b"big\xff\n*", "oversized-file")
    ]

    # The grading copy holds each file under its exact bytes, with its exact content.
    copy = copy_snapshot(snap, tmp_path / "copy")
    apply_changes(snap, copy, changes.files)
    for label, raw in NAMES.items():
        assert _read(copy, raw) == contents[label], label
    assert not os.path.lexists(os.path.join(os.fsencode(copy), b"big\xff\n*"))

    # The grader runs on it (the names are no part of the fix, so the tests still fail).
    (tmp_path / "scratch").mkdir()
    setup = GradingSetup(
        task=task,
        snapshot=snap,
        scratch=tmp_path / "scratch",
        logs=tmp_path / "logs",
        sandbox=get_sandbox("none"),
        python=sys.executable,
    )
    verdict = grade(setup, changes)
    assert verdict.outcome == "fail"

    # result.json: written, read back equal, raw bytes recoverable from the JSON alone.
    findings = tuple(Finding(code="test-code", path=p, detail=f"about {p}") for p in changes.paths)
    left_out = tuple(Finding(code=i.code, path=i.path, detail=i.detail) for i in changes.left_out)
    result = _result(changes.paths).with_final_round(
        grading=verdict.model_copy(update={"findings": findings, "left_out": left_out})
    )
    store = Store(tmp_path / "results")
    store.record(result)
    raw_json = store.trial_paths(result.trial_id).result.read_bytes()
    raw_json.decode("utf-8")  # valid UTF-8 throughout
    on_disk = json.loads(raw_json)
    assert {
        name_bytes(str(name_from_json(p))) for p in on_disk["rounds"][-1]["diff"]["paths"]
    } == set(NAMES.values())
    assert store.latest(result.trial_id) == result

    # The index is built from the folders and rebuilt to the same rows.
    rows = dump(store.db)
    assert store.rebuild_index() == 1
    assert dump(store.db) == rows
    assert store.all_latest() == [result]

    # report --json carries every name; the text report shows each one escaped, on one line.
    report = build_report(store.all_latest())
    data = json.loads(report.to_json())
    (trial,) = data["trials"]
    assert {name_bytes(str(name_from_json(p))) for p in trial["paths"]} == set(NAMES.values())
    assert {name_bytes(str(name_from_json(f["path"]))) for f in trial["findings"]} == set(
        NAMES.values()
    )
    assert [name_bytes(str(name_from_json(f["path"]))) for f in trial["left_out"]] == [
        b"big\xff\n*"
    ]
    out = io.StringIO()
    Console(file=out, width=400, force_terminal=False).print(render_report(report))
    text = out.getvalue()
    for path in changes.paths:
        line = f"- add r1: test-code {shown(path)}:"
        assert line in text, path
    assert "\x1b[31m" not in text  # an escape sequence in a name never reaches the terminal


def test_shown_names_are_one_line_and_tell_raw_bytes_apart() -> None:
    assert shown("a\nb") == "a\\nb"
    assert shown("bad\udcff") == "bad\\xff"
    assert shown("back\\xff") == "back\\\\xff"  # a literal backslash is not a raw byte
    assert shown("\x1b[0m") == "\\x1b[0m"


@pytest.mark.parametrize("raw", [b"\xff", b"a\x00b"[:1] + b"\xfe\xfd", b"\xed\xa0\x80"])
def test_a_name_round_trips_through_json_exactly(raw: bytes) -> None:
    result = _result((raw.decode("utf-8", "surrogateescape"),))
    back = TrialResult.model_validate(json.loads(result.to_json()))
    assert [name_bytes(p) for p in back.diff.paths] == [raw]


def test_raw_bytes_in_free_text_never_stop_a_record(tmp_path: Path) -> None:
    broken = _result(()).model_copy(update={"note": "left \udcff behind"})
    store = Store(tmp_path / "results")
    store.record(broken)
    assert json.loads(store.trial_paths(broken.trial_id).result.read_text())["note"] == (
        "left \x00ff behind"
    )


def test_the_recipe_in_the_results_doc_recovers_the_raw_bytes() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "results.md").read_text()
    section = doc.split("### File names", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {}
    exec(code, namespace)
    decode = namespace["name_bytes"]
    paths = tuple(raw.decode("utf-8", "surrogateescape") for raw in NAMES.values())
    on_disk = json.loads(_result(paths).to_json())["rounds"][-1]["diff"]["paths"]
    assert [decode(p) for p in on_disk] == list(NAMES.values())  # type: ignore[operator]


def test_raw_bytes_in_an_error_never_stop_report_json_or_the_scoreboard() -> None:
    result = _result(()).model_copy(update={"status": "could_not_run", "outcome": "not_graded"})
    result = result.with_final_round(
        agent=result.agent.model_copy(update={"error": "cannot open x\udcff"})
    )
    report = build_report([result])
    assert json.loads(report.to_json())["trials"][0]["error"] == "cannot open x\x00ff"
    out = io.StringIO()
    Console(file=out, width=200, force_terminal=False).print(render_report(report))
    assert "cannot open x\\xff" in out.getvalue()
