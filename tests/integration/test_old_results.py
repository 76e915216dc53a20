"""Results folders written by older harnessdrives are read, reported and resumed as they are.

The folders under tests/fixtures/old-results were written by harnessdrive itself at older
commits (its README says how): result and run manifest schemas 1 and 2, trial ids without the
suite's identity, an index of the first migration only, a run killed mid-trial.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.report.scoreboard import REPORT_SCHEMA
from harnessdrive.store.index import MIGRATIONS, dump
from harnessdrive.store.results import RESULT_SCHEMA
from harnessdrive.store.store import Store
from harnessdrive.tasks import load_suite
from harnessdrive.tasks.identity import suite_id, suite_identity, suite_version

FIXTURES = Path(__file__).parent.parent / "fixtures" / "old-results"
OLD_RUN_1 = "calc-8e34cad9c8"
"""The run that wrote schema-1/, killed while grading calc/plus/noop/r1."""
SCHEMAS = ("schema-1", "schema-2")
VERDICTS = {"reference": "pass", "noop": "fail", "tamperer": "tampered"}


def copy_fixture(name: str, dest: Path) -> Path:
    shutil.copytree(FIXTURES / name, dest, symlinks=True)
    return dest


def folder_files(results: Path) -> dict[str, bytes]:
    """Every file of a results folder but the index (derived; migrated when opened) and the lock
    (it holds the pid of whoever holds the folder)."""
    return {
        path.relative_to(results).as_posix(): path.read_bytes()
        for path in sorted(results.rglob("*"))
        if path.is_file() and not path.name.startswith(("index.sqlite", "lock"))
    }


def assert_kept(before: dict[str, bytes], results: Path) -> None:
    """Nothing was lost or rewritten; the one file that may be new is the folder's marker,
    which keeps it out of every sandbox."""
    after = folder_files(results)
    assert {rel: after.get(rel) for rel in before} == before
    assert set(after) - set(before) <= {".harnessdrive-results"}


def stored(results: Path) -> dict[str, dict[str, Any]]:
    """Every result.json as written, by its folder under trials/."""
    return {
        path.parent.relative_to(results / "trials").as_posix(): json.loads(path.read_text())
        for path in sorted(results.glob("trials/**/result.json"))
    }


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    capsys.readouterr()
    code = run_cli(list(args))
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out, out.err


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(cli(capsys, *args, "--json")[0])
    return data


def assert_holds(old: Any, new: Any, where: str = "report") -> None:
    """Every field ``old`` has holds the same value in ``new`` (which may have more)."""
    if isinstance(old, dict):
        assert isinstance(new, dict), where
        for key, value in old.items():
            assert key in new, f"{where}.{key}"
            assert_holds(value, new[key], f"{where}.{key}")
    elif isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old), where
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            assert_holds(a, b, f"{where}[{i}]")
    else:
        assert new == old, where


@pytest.mark.parametrize("schema", SCHEMAS)
def test_an_old_folder_is_read_and_its_index_migrated_and_rebuilt_changing_no_file(
    tmp_path: Path, schema: str
) -> None:
    results = copy_fixture(schema, tmp_path / "results")
    before = folder_files(results)
    written = stored(results)
    assert written and {d["schema"] for d in written.values()} == {
        f"harnessdrive-result-{schema[-1]}"
    }

    store = Store(results)
    # The old index is migrated, not thrown away: its rows are there before any sync.
    assert store.db.execute("SELECT count(*) FROM results").fetchone()[0] == len(written)
    done = {row[0] for row in store.db.execute("SELECT name FROM _migrations")}
    assert done == {migration.__name__ for migration in MIGRATIONS}
    store.sync_index()
    synced = dump(store.db)
    assert store.rebuild_index() == len(written)
    assert dump(store.db) == synced
    assert {row[-1] for row in synced} == {1}  # one round each, filled in by the sync
    assert {row[-2] for row in synced} == {None}  # no score before schema 3

    for trial, data in written.items():
        result = store.latest(trial)
        assert result is not None, trial
        assert result.schema_ == data["schema"]  # read as written, never claimed newer
        assert (result.trial_id, result.status, result.outcome) == (
            trial,
            data["status"],
            data["outcome"],
        )
        assert result.outcome == VERDICTS[result.harness]
        (only,) = result.rounds
        assert (only.status, only.outcome) == (data["status"], data["outcome"])
        assert only.agent.exit_code == data["agent"]["exit_code"]
        assert list(only.diff.paths) == data["diff"]["paths"]
        assert only.grading is not None and only.grading.hidden is not None
        assert only.grading.hidden.passed == data["grading"]["hidden"]["passed"]
        assert [f.code for f in only.grading.findings] == [
            f["code"] for f in data["grading"]["findings"]
        ]
        assert result.totals.rounds == 1
        assert result.totals.agent_seconds == data["seconds"]["agent"]
        assert result.score is None and result.metrics == {}
    store.close()
    assert_kept(before, results)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_an_old_folder_reports_what_its_own_harnessdrive_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schema: str
) -> None:
    results = copy_fixture(schema, tmp_path / "results")
    before = folder_files(results)
    old = json.loads((FIXTURES / f"{schema}.report.json").read_text())

    new = cli_json(capsys, "report", "--results", str(results))
    # Schema 2 of the report added statistics and details; every field of 1 still holds.
    assert (old.pop("schema"), new["schema"]) == ("harnessdrive-report-1", REPORT_SCHEMA)
    # Schema 3 made the headline the answer in words (docs/report.md).
    assert old.pop("headline").startswith("On ")
    assert new["headline"] == new["statistics"]["answer"]
    assert_holds(old, new)
    written = stored(results)
    assert sorted((t["trial_id"], t["status"], t["outcome"]) for t in new["trials"]) == [
        (trial, written[trial]["status"], written[trial]["outcome"]) for trial in written
    ]
    assert {(t["rounds"], t["score"]) for t in new["trials"]} == {(1, None)}
    text, _ = cli(capsys, "report", "--results", str(results))
    old_text = (FIXTURES / f"{schema}.report.txt").read_text()
    # Columns were added since (the interval of the pass rate, ...); the verdicts per task
    # read the same.
    tasks = old_text[old_text.index("Tasks") :].split("\n- ")[0]
    assert _unpadded(tasks) in _unpadded(text)
    assert "Score" not in text

    cli(capsys, "index", "--results", str(results))
    cli(capsys, "index", "--rebuild", "--results", str(results))
    assert_kept(before, results)


def move_with_suite(results: Path, suite: Path) -> None:
    """Move the results folder together with its suite (from where its manifest says): rewrite
    what a suite's place determines and nothing else. That is each task's fingerprint (it hashes
    the repository's path), the suite's folder, and from schema 2 on the suite's identity (a
    hash of its folder: also the first part of trial ids and folders) and its version (a hash
    of the fingerprints). Every other byte stays as the old harnessdrive wrote it."""
    loaded = load_suite(suite)
    moved = {task.id: task.fingerprint for task in loaded.tasks}
    manifest = json.loads(next((results / "runs").glob("*.json")).read_text())
    recorded_at = manifest["suite_folder"]
    changes = {recorded_at: str(suite.resolve())}
    if "suite_id" in manifest:
        # Today's harnessdrive gives the recorded place the identity the old one recorded.
        assert suite_id(loaded.name, Path(recorded_at)) == manifest["suite_id"]
        changes[manifest["suite_id"]] = suite_identity(loaded)
        changes[manifest["suite_version"]] = suite_version(loaded)
    for path in results.rglob("*.json"):
        text = path.read_text()
        data = json.loads(text)
        record = data.get("interrupted", data)
        if "task_fingerprint" in record:
            changes[record["task_fingerprint"]] = moved[record["task"]]
        for old, new in changes.items():
            text = text.replace(f'"{old}', f'"{new}')
        path.write_text(text)
    for folder in list((results / "trials").iterdir()):
        folder.rename(folder.with_name(changes.get(folder.name, folder.name)))


@pytest.mark.slow
def test_a_schema_1_folder_resumes_running_only_what_it_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = copy_fixture("schema-1", tmp_path / "results")
    suite = copy_fixture("calc", tmp_path / "calc")
    move_with_suite(results, suite)
    before = folder_files(results)
    recorded = stored(results)
    assert sorted(recorded) == [
        "calc/add/noop/r1",
        "calc/add/reference/r1",
        "calc/add/tamperer/r1",
        "calc/plus/reference/r1",
    ]

    # The command that wrote the folder, run again by today's harnessdrive.
    out, err = cli(
        capsys, "run", str(suite), "--sandbox", "none", "--results", str(results), "--json"
    )
    assert "4 of 9 trials already recorded; resuming" in err
    assert "Recorded calc/plus/noop/r1 as interrupted" in err
    shown = json.loads(out)

    # The four recorded trials were not run again: their folders are as they were.
    after = folder_files(results)
    for rel, data in before.items():
        if rel.startswith("trials/"):
            assert after[rel] == data, rel
    # The trial in flight at the kill is recorded as interrupted where it was, then run again.
    interrupted = stored(results)["calc/plus/noop/r1"]
    assert (interrupted["status"], interrupted["schema"]) == ("interrupted", RESULT_SCHEMA)
    assert not list((results / "inflight").glob("*.json"))

    # What was missing ran, under today's ids, in schema 3.
    identity = suite_identity(load_suite(suite))
    new = {k: v for k, v in stored(results).items() if k.startswith(f"{identity}/")}
    assert sorted(new) == sorted(
        f"{identity}/{task}/{variant}/r1"
        for task, variant in [
            ("plus", "noop"),
            ("plus", "tamperer"),
            ("total", "reference"),
            ("total", "noop"),
            ("total", "tamperer"),
        ]
    )
    assert {(d["schema"], d["suite_id"], len(d["rounds"])) for d in new.values()} == {
        (RESULT_SCHEMA, identity, 1)
    }

    # The report shows both: the old trials under their old ids, the new ones beside them.
    trials = {(t["task"], t["variant"]): t for t in shown["trials"]}
    assert len(trials) == 9
    assert all(t["outcome"] == VERDICTS[t["variant"]] for t in trials.values())
    for trial in recorded:
        _, task, variant, _ = trial.split("/")
        assert trials[(task, variant)]["trial_id"] == trial
    assert (shown["tasks_compared"], shown["suite_id"]) == (3, identity)
    mixed = " ".join(shown["mixed"])
    assert (
        f"4 of 9 trial(s) were recorded by another run of this suite and reused here: {OLD_RUN_1}"
        in mixed
    )
    assert "different suites" not in mixed
    manifest = json.loads(
        next(p for p in (results / "runs").glob("*.json") if p.stem != OLD_RUN_1).read_text()
    )
    assert manifest["attempts"]["calc/add/reference/r1"] == 1
    again = cli_json(capsys, "report", shown["run_id"], "--results", str(results))
    assert [t["trial_id"] for t in again["trials"]] == [t["trial_id"] for t in shown["trials"]]

    # The old run's report still shows what it recorded, and the interruption.
    old = cli_json(capsys, "report", OLD_RUN_1, "--results", str(results))
    assert [(t["trial_id"], t["status"], t["outcome"]) for t in old["trials"]] == [
        ("calc/add/reference/r1", "completed", "pass"),
        ("calc/add/noop/r1", "completed", "fail"),
        ("calc/add/tamperer/r1", "completed", "tampered"),
        ("calc/plus/reference/r1", "completed", "pass"),
        ("calc/plus/noop/r1", "interrupted", "not_graded"),
    ]

    # The same command once more runs nothing.
    _, err = cli(capsys, "run", str(suite), "--sandbox", "none", "--results", str(results))
    assert "9 of 9 trials already recorded; resuming" in err
    store = Store(results)
    store.sync_index()
    synced = dump(store.db)
    store.rebuild_index()
    assert dump(store.db) == synced
    store.close()


@pytest.mark.slow
def test_a_schema_2_folder_resumes_and_reports_its_trials_beside_new_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = copy_fixture("schema-2", tmp_path / "results")
    suite = copy_fixture("calc", tmp_path / "calc")
    move_with_suite(results, suite)
    before = {rel: data for rel, data in folder_files(results).items() if rel.startswith("trials/")}
    args = ("--sandbox", "none", "--results", str(results))

    # The command that wrote it: everything stands.
    _, err = cli(capsys, "run", str(suite), "-H", "reference,tamperer", *args)
    assert "6 of 6 trials already recorded; resuming" in err
    # Another arm beside the recorded ones: only its trials run.
    shown = cli_json(capsys, "run", str(suite), "-H", "reference,noop", *args)
    after = folder_files(results)
    assert {rel: after[rel] for rel in before} == before
    trials = {t["trial_id"]: t for t in shown["trials"]}
    written = stored(results)
    assert sorted(trials) == sorted(t for t in written if "/tamperer/" not in t)
    for trial, row in trials.items():
        assert row["outcome"] == VERDICTS[row["variant"]]
        assert written[trial]["schema"] == (
            "harnessdrive-result-2" if row["variant"] == "reference" else RESULT_SCHEMA
        )
    assert any("recorded by another run" in line for line in shown["mixed"])


@pytest.mark.slow
def test_trials_of_an_old_folder_are_not_taken_for_a_suite_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The same suite, but not where the folder's trials ran: their fingerprints do not match.
    results = copy_fixture("schema-1", tmp_path / "results")
    suite = copy_fixture("calc", tmp_path / "calc")
    recorded = stored(results)
    shown = cli_json(
        capsys, "run", str(suite), "-H", "reference", "--sandbox", "none", "--results", str(results)
    )
    identity = suite_identity(load_suite(suite))
    assert [t["trial_id"] for t in shown["trials"]] == [
        f"{identity}/{task}/reference/r1" for task in ("add", "plus", "total")
    ]
    assert all(t["outcome"] == "pass" for t in shown["trials"])
    assert shown["mixed"] == []
    after = stored(results)
    assert {k: after[k] for k in recorded} == recorded


def test_an_estimate_on_a_schema_1_folder_counts_only_the_trials_it_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = copy_fixture("schema-1", tmp_path / "results")
    suite = copy_fixture("calc", tmp_path / "calc")
    move_with_suite(results, suite)
    shown = cli_json(capsys, "estimate", str(suite), "--results", str(results))
    # Recorded: add by all three, plus by reference; plus/noop was cut off by the kill.
    assert {row["variant"]: row["to_run"] for row in shown["variants"]} == {
        "reference": 1,
        "noop": 2,
        "tamperer": 2,
    }


def _unpadded(text: str) -> str:
    """``text`` without the spaces a table's title is padded with (a pipe's output has none)."""
    return "\n".join(line.rstrip() for line in text.splitlines())
