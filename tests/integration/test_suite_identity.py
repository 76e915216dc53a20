"""Suites that share a name keep apart in one results folder; a report shows its own run only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.store.store import Store
from harnessdrive.testing.suites import write_suite
from tests.conftest import add_task


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    capsys.readouterr()
    code = run_cli([*args, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    data: dict[str, Any] = json.loads(out.out)
    return data


def run_suite(
    capsys: pytest.CaptureFixture[str], suite: Path, results: Path, harnesses: str
) -> dict[str, Any]:
    args = ("run", str(suite), "-H", harnesses, "--sandbox", "none", "--results", str(results))
    return cli_json(capsys, *args)


def report(capsys: pytest.CaptureFixture[str], results: Path, run_id: str) -> dict[str, Any]:
    return cli_json(capsys, "report", run_id, "--results", str(results))


@pytest.mark.slow
def test_two_suites_with_one_name_keep_both_histories_and_their_own_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two mined suites both named after their repository, with a task of the same id.
    first = write_suite(tmp_path / "one", [add_task("fix")], name="repo")
    second = write_suite(
        tmp_path / "two", [add_task("fix", prompt="Another repository's task.")], name="repo"
    )
    results = tmp_path / "results"

    run_one = run_suite(capsys, first, results, "reference")
    run_two = run_suite(capsys, second, results, "reference,noop")
    assert run_one["run_id"] != run_two["run_id"]

    # Both histories are kept: one trial folder per suite, nothing moved to previous/.
    recorded = sorted(p.relative_to(results) for p in results.glob("trials/**/result.json"))
    assert len(recorded) == 3
    assert not list(results.glob("trials/**/previous"))
    suites = {p.parts[1] for p in recorded}
    assert len(suites) == 2 and all(s.startswith("repo@") for s in suites)

    runs = ((run_one, first, {"reference"}), (run_two, second, {"reference", "noop"}))
    for run, folder, variants in runs:
        shown = report(capsys, results, run["run_id"])
        assert {t["variant"] for t in shown["trials"]} == variants
        stored = [Store(results).latest(t["trial_id"]) for t in shown["trials"]]
        assert all(r is not None for r in stored)
        assert {r.suite_folder for r in stored if r} == {str(folder.resolve())}
        assert {r.run_id for r in stored if r} == {run["run_id"]}
        assert {r.suite_id for r in stored if r} == {shown["suite_id"]}
        assert shown["mixed"] == []

    # The same command again resumes: nothing runs a second time.
    again = run_suite(capsys, first, results, "reference")
    assert again["run_id"] == run_one["run_id"]
    assert len(list(results.glob("trials/**/result.json"))) == 3


@pytest.mark.slow
def test_a_report_counts_the_attempts_its_run_used_and_states_a_reused_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path, [add_task("a"), add_task("b")], name="repo")
    results = tmp_path / "results"
    first = run_suite(capsys, suite, results, "reference")

    # Another command on the same suite reuses the reference trials, and says so.
    second = run_suite(capsys, suite, results, "reference,noop")
    assert any("recorded by another run" in line for line in second["mixed"])
    assert first["run_id"] in " ".join(second["mixed"])

    # Editing task a reruns its trial; the first run's report still shows what it counted.
    task_toml = suite / "tasks" / "a" / "task.toml"
    task_toml.write_text(task_toml.read_text().replace("Make the tests pass.", "Fix add()."))
    third = run_suite(capsys, suite, results, "noop")
    assert {t["task"] for t in third["trials"]} == {"a", "b"}
    rerun = run_suite(capsys, suite, results, "reference,noop")
    attempts = {(t["task"], t["variant"]): t["attempt"] for t in rerun["trials"]}
    assert attempts[("a", "reference")] == 2 and attempts[("b", "reference")] == 1

    shown = report(capsys, results, first["run_id"])
    assert [(t["task"], t["attempt"], t["outcome"]) for t in shown["trials"]] == [
        ("a", 1, "pass"),
        ("b", 1, "pass"),
    ]
    assert shown["mixed"] == []
    # The rerun's own report mixes two versions of the suite, and says which task changed.
    mixed = " ".join(report(capsys, results, rerun["run_id"])["mixed"])
    assert "2 versions of the suite" in mixed
    assert "recorded by another run" in mixed


def test_results_written_before_suite_identities_still_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path, [add_task("a")], name="repo")
    results = tmp_path / "results"
    run_id = run_suite(capsys, suite, results, "reference")["run_id"]
    # Rewrite the folder as an older harnessdrive left it: schema 1, no identity, no attempts.
    (result_path,) = results.glob("trials/**/result.json")
    data = json.loads(result_path.read_text())
    for key in ("suite_id", "suite_folder", "suite_version", "harnessdrive_version"):
        del data[key]
    data["schema"] = "harnessdrive-result-1"
    legacy = results / "trials" / "repo" / "a" / "reference" / "r1"
    legacy.mkdir(parents=True)
    data["trial_id"] = "repo/a/reference/r1"
    (legacy / "result.json").write_text(json.dumps(data))
    result_path.unlink()
    manifest_path = results / "runs" / f"{run_id}.json"
    manifest = json.loads(manifest_path.read_text())
    manifest.update(schema="harnessdrive-run-1", trials=["repo/a/reference/r1"])
    del manifest["attempts"]
    manifest_path.write_text(json.dumps(manifest))

    shown = report(capsys, results, run_id)
    assert [(t["trial_id"], t["outcome"]) for t in shown["trials"]] == [
        ("repo/a/reference/r1", "pass")
    ]
    capsys.readouterr()
    assert run_cli(["index", "--rebuild", "--results", str(results)]) == 0
