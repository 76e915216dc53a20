"""A run records each task's trust in its manifest; every command that scores the results folder
afterwards (report as text, JSON and a page, compare, compare against a baseline) leaves out the
same tasks, says so with a count and the names, and counts them again with --all-tasks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.audit.record import ExploitOutcome, TaskAudit, write_audit
from harnessdrive.cli.app import run_cli
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.suites import TaskFiles, write_suite

TASKS = ("t0", "t1", "t2")


def _task(task_id: str) -> TaskFiles:
    return TaskFiles(
        task_id,
        files={"state.txt": "broken\n"},
        hidden={"check.sh": "grep -qx fixed state.txt\n"},
        solution={"state.txt": "fixed\n"},
        command="sh check.sh",
    )


def _mark(suite: Path, task_id: str, *, exploit: str = "", problem: str = "") -> None:
    """Write the audit record ``check --audit`` would: broken by ``exploit``, or invalid for
    ``problem``, or trusted with neither."""
    task = next(t for t in load_suite(suite).tasks if t.id == task_id)
    record = TaskAudit(task=task.id, fingerprint=task.fingerprint)
    record.exploits.append(ExploitOutcome("conftest-plant", "fail", succeeded=False))
    if exploit:
        record.exploits.append(ExploitOutcome(exploit, "pass", succeeded=True, fix="hide it"))
    if problem:
        record.problems.append(problem)
    write_audit(task.folder, record)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    code = run_cli(list(args))
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_cli(capsys, *args, "--json"))
    return data


def _tasks(report: dict[str, Any]) -> set[str]:
    return {row["task"] for row in report["tasks"]}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A suite whose t1 the audit found broken, t0 trusted and t2 never audited, and the
    results of reference and noop on it."""
    root = tmp_path_factory.mktemp("trust")
    suite = write_suite(root, [_task(t) for t in TASKS])
    _mark(suite, "t0")
    _mark(suite, "t1", exploit="constant-stub")
    results = root / "results"
    arms = ["-H", "reference,noop", "--sandbox", "none", "--json"]
    assert run_cli(["run", str(suite), *arms, "--results", str(results)]) == 0
    return suite, results


def test_the_run_records_each_tasks_trust_in_its_manifest(recorded: tuple[Path, Path]) -> None:
    suite, results = recorded
    (manifest,) = [json.loads(p.read_text()) for p in (results / "runs").glob("*.json")]
    trust = manifest["trust"]
    assert {task: trust[task]["status"] for task in TASKS} == {
        "t0": "trusted",
        "t1": "untrusted",
        "t2": "unaudited",
    }
    assert trust["t1"]["exploits"] == ["constant-stub"]
    fingerprints = {t.id: t.fingerprint for t in load_suite(suite).tasks}
    assert trust["t1"]["audited_fingerprint"] == fingerprints["t1"] == trust["t1"]["fingerprint"]
    assert trust["t1"]["audited"] and len(trust["t1"]["audit_sha256"]) == 16
    assert trust["t2"]["audited"] is None


def test_report_text_leaves_the_untrusted_task_out_and_all_tasks_counts_it(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, results = recorded
    text = " ".join(_cli(capsys, "report", "--results", str(results)).split())
    assert (
        "Left out 1 task the audit marked untrusted or invalid: t1 (untrusted: constant-stub)"
        in text
    )
    assert "1 task not audited, counted: t2" in text
    shown = _json(capsys, "report", "--results", str(results))
    assert _tasks(shown) == {"t0", "t2"}
    assert (shown["tasks_total"], shown["tasks_compared"]) == (2, 2)
    assert {t["task"] for t in shown["trials"]} == {"t0", "t2"}
    assert [item["task"] for item in shown["trust"]["left_out"]] == ["t1"]
    assert shown["trust"]["not_audited"] == ["t2"]

    every = _json(capsys, "report", "--results", str(results), "--all-tasks")
    assert _tasks(every) == set(TASKS) and every["tasks_total"] == 3
    again = " ".join(_cli(capsys, "report", "--results", str(results), "--all-tasks").split())
    assert "Counted 1 task the audit marked untrusted or invalid" in again
    assert "Left out" not in again
    # Every run of the folder together counts the same.
    assert _tasks(_json(capsys, "report", "--all", "--results", str(results))) == {"t0", "t2"}


def test_the_runs_own_scoreboard_and_the_report_count_the_same_tasks(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    suite, results = recorded
    # The same command again resumes everything and shows the run's own scoreboard.
    shown = _json(
        capsys, "run", str(suite), "-H", "reference,noop", "--sandbox", "none",
        "--results", str(results),
    )  # fmt: skip
    report = _json(capsys, "report", "--results", str(results))
    assert _tasks(shown) == _tasks(report) == {"t0", "t2"}
    assert shown["trust"] == report["trust"]
    assert shown["statistics"]["arms"] == report["statistics"]["arms"]


def test_the_page_counts_the_tasks_the_scoreboard_counts(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, results = recorded
    page = tmp_path / "page.html"
    _cli(capsys, "report", "--results", str(results), "--format", "html", "-o", str(page))
    html = page.read_text()
    assert '<p class="trust">Left out 1 task the audit marked untrusted or invalid: t1' in html
    assert "2 of 2 tasks compared" in html
    assert "/t1/reference/r1" not in html and "/t0/reference/r1" in html

    every = tmp_path / "every.html"
    _cli(
        capsys, "report", "--results", str(results), "--format", "html", "-o", str(every),
        "--all-tasks",
    )  # fmt: skip
    html = every.read_text()
    assert "3 of 3 tasks compared" in html and "/t1/reference/r1" in html
    assert "Counted 1 task the audit marked untrusted or invalid" in html


def test_compare_pairs_only_the_counted_tasks(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, results = recorded
    found = _json(capsys, "compare", "reference", "noop", "--results", str(results))
    assert {row["task"] for row in found["tasks"]} == {"t0", "t2"}
    assert [item["task"] for item in found["trust"]["left_out"]] == ["t1"]
    text = " ".join(_cli(capsys, "compare", "reference", "noop", "--results", str(results)).split())
    assert "Left out 1 task the audit marked untrusted or invalid: t1" in text
    every = _json(capsys, "compare", "reference", "noop", "--results", str(results), "--all-tasks")
    assert {row["task"] for row in every["tasks"]} == set(TASKS)
    assert every["wins"] == found["wins"] + 1


def test_the_regression_gate_leaves_a_task_untrusted_on_either_side_out_of_both(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, results = recorded
    # The baseline: the same results with t1 trusted, t0 invalid there.
    baseline = tmp_path / "baseline"
    shutil.copytree(results, baseline)
    (manifest_path,) = (baseline / "runs").glob("*.json")
    manifest = json.loads(manifest_path.read_text())
    manifest["trust"]["t1"].update(status="trusted", exploits=[])
    manifest["trust"]["t0"].update(status="invalid", problems=["the reference fails"])
    manifest_path.write_text(json.dumps(manifest))

    args = ["compare", "reference", "--baseline", str(baseline), "--results", str(results)]
    found = _json(capsys, *args)
    assert {row["task"] for row in found["tasks"]} == {"t2"}
    assert [(item["task"], item["status"]) for item in found["trust"]["left_out"]] == [
        ("t0", "invalid"),
        ("t1", "untrusted"),
    ]
    text = " ".join(_cli(capsys, *args).split())
    assert "Left out 2 tasks" in text and "t0 (invalid: the reference fails)" in text
    assert {row["task"] for row in _json(capsys, *args, "--all-tasks")["tasks"]} == set(TASKS)


def test_a_re_audit_after_the_run_counts_with_suite_or_a_new_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    suite = write_suite(tmp_path, [_task(t) for t in TASKS])
    _mark(suite, "t0")
    _mark(suite, "t1", exploit="constant-stub")
    results = tmp_path / "results"
    args = ["-H", "reference,noop", "--sandbox", "none", "--results", str(results)]
    assert _tasks(_json(capsys, "run", str(suite), *args)) == {"t0", "t2"}
    # The task is fixed and audited again after the run: t1 trusted, t2 now broken.
    _mark(suite, "t1")
    _mark(suite, "t2", exploit="conftest-plant")

    # The report reads what the run recorded, whenever it is made.
    assert _tasks(_json(capsys, "report", "--results", str(results))) == {"t0", "t2"}
    # --suite counts by the audits now, and says so.
    now = _json(capsys, "report", "--results", str(results), "--suite", str(suite))
    assert _tasks(now) == {"t0", "t1"}
    assert now["trust"]["source"] == "suite"
    text = _cli(capsys, "report", "--results", str(results), "--suite", str(suite))
    assert "(the suite's audits now, --suite)" in " ".join(text.split())
    compared = _json(
        capsys, "compare", "reference", "noop", "--results", str(results), "--suite", str(suite)
    )
    assert {row["task"] for row in compared["tasks"]} == {"t0", "t1"}
    # Running the same command again runs nothing and records the audits now.
    assert _tasks(_json(capsys, "run", str(suite), *args)) == {"t0", "t1"}
    assert _tasks(_json(capsys, "report", "--results", str(results))) == {"t0", "t1"}


def test_suite_with_a_baseline_is_refused_in_a_line(
    recorded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    suite, results = recorded
    capsys.readouterr()
    args = ["compare", "reference", "--baseline", str(suite), "--suite", str(suite)]
    assert run_cli([*args, "--results", str(results)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --suite and --baseline ask for two countings") and "\n" not in err
