"""Bad input of every kind: one line on stderr, exit code 2, no traceback, nothing written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.testing.suites import TaskFiles, write_suite
from tests.conftest import add_task


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, str]:
    suite = write_suite(tmp_path, [add_task("good")])
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("someone's files")
    variant_typo = write_suite(
        tmp_path, [add_task("v")], name="v", variants=[{"harness": "reference", "modle": "x"}]
    )
    option_typo = write_suite(
        tmp_path,
        [add_task("o")],
        name="o",
        variants=[{"harness": "command", "name": "c", "options": {"templat": "true"}}],
    )
    scripted_options = write_suite(
        tmp_path, [add_task("s")], name="s", variants=[{"harness": "noop", "options": {"x": 1}}]
    )
    bad_ref = write_suite(
        tmp_path, [add_task("g", extra={"repo": {"ref": "no-such-ref"}})], name="g"
    )
    subprocess.run(["git", "init", "-q", str(bad_ref / "tasks" / "g" / "repo")], check=True)
    no_repo = write_suite(tmp_path, [add_task("n", extra={"repo": {"ref": "main"}})], name="n")
    return {
        "suite": str(suite),
        "file": str(a_file),
        "under_file": str(a_file / "results"),
        "empty": str(empty),
        "other": str(other),
        "variant_typo": str(variant_typo),
        "option_typo": str(option_typo),
        "scripted_options": str(scripted_options),
        "bad_ref": str(bad_ref),
        "no_repo": str(no_repo),
        "key_typo": str(
            write_suite(tmp_path, [add_task("k", extra={"grade": {"comand": "x"}})], name="k")
        ),
    }


BAD_INPUTS = [
    (["run", "{suite}", "-H", "reference", "--results", "{file}"], "is a file"),
    (["run", "{suite}", "-H", "reference", "--results", "{under_file}"], "lies under a file"),
    (["run", "{suite}", "-H", "reference", "--model", "reference=foo"], "runs no model"),
    (["run", "{suite}", "-H", "reference", "--model", "noop=foo"], "not in the run: noop"),
    (["index", "--results", "{empty}"], "is not a results folder"),
    (["index", "--rebuild", "--results", "{other}"], "is not a results folder"),
    (["report", "--results", "{empty}"], "is not a results folder"),
    (["report", "--results", "{file}"], "is a file, not a results folder"),
    (
        ["run", "{suite}", "-H", "refrence"],
        "unknown harness 'refrence' (did you mean 'reference'?)",
    ),
    (["run", "{key_typo}", "-H", "noop"], "unknown key 'grade.comand' (did you mean 'command'?)"),
    (["run", "{variant_typo}"], "unknown key 'variants.0.modle' (did you mean 'model'?)"),
    (["run", "{option_typo}"], "templat (did you mean 'template'?)"),
    (["run", "{scripted_options}"], "noop takes no options"),
    (["run", "{suite}", "-H", "noop", "--sandbox", "bwarp"], "(did you mean 'bwrap'?)"),
    (["run", "{suite}", "-H", "noop", "--network", "loopbak"], "(did you mean 'loopback'?)"),
    (["schema", "tsak"], "unknown schema 'tsak' (did you mean 'task'?)"),
    (["run", "{bad_ref}", "-H", "reference"], "g/task.toml: 'no-such-ref' names no commit in"),
    (["run", "{no_repo}", "-H", "reference"], "n/task.toml: not a git repository"),
    (
        ["run", "{suite}", "-H", "reference", "--repeat", "-1"],
        "the repeat count must be at least 1, not -1 (--repeat)",
    ),
    (["run", "{suite}", "-H", "reference", "--allow-unpriced", "refrence"], "(did you mean"),
    (["run", "{suite}", "-H", "noop", "--executor", "rya"], "no executor named 'rya'"),
    (["run", "{suite}", "-H", "noop", "--limit", "noop=0"], "bad concurrency limit 'noop=0'"),
    (["run", "{suite}", "-H", "noop", "--limit", "noop"], "expected NAME=N"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUTS)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path,
    folders: dict[str, str],
    args: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [a.format(**folders) for a in args]
    if argv[0] == "run" and "--results" not in argv:
        argv += ["--results", str(tmp_path / "results")]
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert run_cli(argv) == 2
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.err
    assert message in lines[0]
    assert out.out == ""
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    suite = write_suite(tmp_path, [add_task("t")], name="r")
    results = tmp_path / "results"
    args = ["run", str(suite), "-H", "noop", "--sandbox", "none", "--results", str(results)]
    assert run_cli(args) == 0
    capsys.readouterr()
    return results


def test_a_results_folder_from_a_newer_harnessdrive_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = recorded(tmp_path, capsys)
    (path,) = results.glob("trials/**/result.json")
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "schema": "harnessdrive-result-9", "new_field": 1}))
    for argv in (["report"], ["index"]):
        assert run_cli([*argv, "--results", str(results)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1
        assert "written by a newer harnessdrive (harnessdrive-result-9" in err
        assert "upgrade harnessdrive" in err


def test_an_unreadable_run_manifest_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = recorded(tmp_path, capsys)
    (manifest,) = results.glob("runs/*.json")
    run_id = manifest.stem
    assert run_cli(["report", run_id[:-1] + "x", "--results", str(results)]) == 2
    assert f"(did you mean {run_id!r}?)" in capsys.readouterr().err
    manifest.write_text("{not json")
    assert run_cli(["report", "--results", str(results)]) == 2
    assert f"cannot read {manifest}" in capsys.readouterr().err


def test_breaker_on_a_task_without_python_says_it_is_python_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shell_task = TaskFiles(
        "sh",
        files={"greet.sh": "echo helo\n"},
        solution={"greet.sh": "echo hello\n"},
        command="sh greet.sh | grep -qx hello",
    )
    suite = write_suite(tmp_path, [shell_task], name="sh")
    args = ["run", str(suite), "-H", "breaker", "--sandbox", "none", "--json"]
    # Its only harness never got to run, so the run says so in its exit status too.
    assert run_cli([*args, "--results", str(tmp_path / "results")]) == 1
    captured = capsys.readouterr()
    assert "breaker never got to run: breaker edits Python only" in captured.err
    report = json.loads(captured.out)
    (trial,) = report["trials"]
    assert trial["status"] == "could_not_run"
    assert "breaker edits Python only" in trial["error"]
    assert any("breaker could not run: breaker edits Python only" in n for n in report["notes"])
