"""A differential task as a new author writes one: a six-rule tool with a long-lived command
oracle and command generator (the line protocol), composed switches and a realistic generator
that makes few cases no rule changes. It builds (and a build killed halfway resumes), checks
with a partial starter, and grades: a solution missing one rule loses that rule's bucket alone,
its counterexamples labelled with that rule alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harnessdrive.grading.differential.casesets import freeze_cases, read_case_set
from harnessdrive.grading.differential.kind import grade_candidate
from harnessdrive.grading.differential.pool import journal_path
from harnessdrive.grading.differential.results import counterexamples_in
from harnessdrive.grading.differential.spec import DifferentialGradeSpec
from harnessdrive.tasks.loading import Task, load_task
from tests.sandboxes import sandbox_of

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("differential-tidyconf")]

FIXTURE = Path(__file__).parent.parent / "fixtures" / "differential" / "tidyconf"
RULES = ("strip", "blank", "comments", "lower", "escape", "dedupe")
BUILD = ["--pool", "600", "--per-rule", "20", "--base", "0", "--seed", "1"]


def spec_of(task: Task) -> DifferentialGradeSpec:
    spec = task.spec.grade
    assert isinstance(spec, DifferentialGradeSpec)
    return spec


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harnessdrive", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def copy_task(folder: Path) -> Path:
    shutil.copytree(FIXTURE, folder)
    return folder


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Task:
    folder = copy_task(tmp_path_factory.mktemp("tidyconf") / "tidyconf")
    done = cli("cases", "build", str(folder), *BUILD)
    assert done.returncode == 0, done.stderr
    return load_task(folder)


def test_a_build_killed_halfway_resumes_where_it_stopped(built: Task, tmp_path: Path) -> None:
    folder = copy_task(tmp_path / "tidyconf")
    (folder / "crash-after").write_text("1500")  # the oracle kills the build at answer 1,501
    killed = cli("cases", "build", str(folder), *BUILD)
    assert killed.returncode == -9
    spec = spec_of(built)
    journal = journal_path(folder / spec.cases)
    kept = journal.read_text().splitlines()
    assert len(kept) > 1500 and not (folder / spec.cases).exists()
    (folder / "crash-after").unlink()
    resumed = cli("cases", "build", str(folder), *BUILD)
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed: " in resumed.stdout
    count = int(resumed.stdout.split("resumed: ")[1].split()[0])
    assert count >= 1500
    assert not journal.exists()
    # The resumed build froze what an uninterrupted one froze, byte for byte.
    assert (folder / spec.cases).read_bytes() == (built.folder / spec.cases).read_bytes()


def test_the_build_records_composing_switches_and_no_base_bucket(built: Task) -> None:
    spec = spec_of(built)
    meta = json.loads((built.folder / "cases" / "hidden.meta.json").read_text())
    assert meta["composes"] is True
    assert meta["base"] == 0 and "base" not in meta["buckets"]
    rows = read_case_set(built.folder / spec.cases, spec).rows
    assert {row.bucket for row in rows} == set(RULES)
    assert any(len(row.rules) > 1 for row in rows)  # buckets that are not all isolated


def test_the_env_variable_switches_compose(built: Task, tmp_path: Path) -> None:
    # The same oracle as a command per answer, each rule switched by one shared variable:
    # two rules off set TIDY_OFF=a,b, so the set it builds is the set the line protocol built.
    folder = copy_task(tmp_path / "tidyconf")
    toml = folder / "task.toml"
    switches = ", ".join(f'{rule} = "TIDY_OFF={rule}"' for rule in RULES)
    toml.write_text(
        toml.read_text().replace(
            'command = "{python} -I oracle/tidy.py --lines"\nprotocol = "lines"',
            f'command = "{{python}} -I oracle/tidy.py"\nswitches = {{ {switches} }}',
        )
    )
    task = load_task(folder)
    spec = spec_of(task)
    assert spec.oracle.protocol == "call"
    frozen = freeze_cases(folder, task.repo_path, spec, pool=60, per_rule=2, seed=1, base=0)
    assert frozen.composes is True
    rows = read_case_set(folder / spec.cases, spec).rows
    assert all(row.input["lines"] for row in rows)


def test_a_solution_missing_one_rule_loses_that_bucket_alone(built: Task, tmp_path: Path) -> None:
    spec = spec_of(built)
    cases = read_case_set(built.folder / spec.cases, spec).rows
    root = tmp_path / "repo"
    shutil.copytree(built.repo_path, root)
    solution = (built.folder / "solution" / "tidy" / "norm.py").read_text()
    without_lower = solution.replace("line = line.lower()", "pass")
    assert without_lower != solution
    (root / "tidy" / "norm.py").write_text(without_lower)
    # Some case of another bucket is changed by 'lower' too: the buckets are not isolated.
    assert any(row.bucket != "lower" and "lower" in row.rules for row in cases)
    verdict = grade_candidate(
        spec,
        cases,
        task_folder=built.folder,
        root=root,
        work=tmp_path / "work",
        sandbox=sandbox_of("none"),
        python=sys.executable,
    )
    rates = {rule: verdict.metrics[f"rule.{rule}.rate"] for rule in RULES}
    assert rates == {rule: 0.0 if rule == "lower" else 1.0 for rule in RULES}
    examples = counterexamples_in(verdict.details)
    assert examples
    for example in examples:
        assert example.label == "breaks" and example.rules == ("lower",)


def test_check_holds_a_partial_starter_to_its_ceiling(built: Task, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    (suite / "tasks").mkdir(parents=True)
    (suite / "suite.toml").write_text('name = "tidy"\ntasks = ["tasks/*"]\n')
    folder = suite / "tasks" / "tidyconf"
    shutil.copytree(built.folder, folder)
    done = cli("check", str(suite), "--json", "--sandbox", "none")
    rows = {row["baseline"]: row for row in json.loads(done.stdout)["baselines"]}
    starter = rows["starter"]
    assert 0 < starter["score"] <= 0.5 and starter["ok"], rows
    assert all(row["ok"] for row in rows.values()), rows
    assert done.returncode == 0, done.stdout[-2000:]
    # With the default ceiling (0) the partial starter is wrong, and the tables still print.
    toml = folder / "task.toml"
    toml.write_text(toml.read_text().replace("starter_score = 0.5\n", ""))
    strict = cli("check", str(suite), "--sandbox", "none")
    assert strict.returncode == 1
    assert "Self-test of" in strict.stdout and "starter scored" in strict.stdout


def test_the_grading_time_limit_fails_the_trial_with_what_was_graded(
    built: Task, tmp_path: Path
) -> None:
    spec = spec_of(built).model_copy(update={"timeout": 3.0, "case_timeout": 0.5})
    cases = read_case_set(built.folder / spec.cases, spec).rows
    root = tmp_path / "repo"
    shutil.copytree(built.repo_path, root)
    (root / "tidy" / "norm.py").write_text("def tidy(case):\n    while True:\n        pass\n")
    verdict = grade_candidate(
        spec,
        cases,
        task_folder=built.folder,
        root=root,
        work=tmp_path / "work",
        sandbox=sandbox_of("none"),
        python=sys.executable,
    )
    graded = verdict.metrics["cases_graded"]
    assert 0 < graded < len(cases)
    assert verdict.outcome == "fail" and verdict.score == 0.0
    assert verdict.error is not None and verdict.error.startswith("grading time limit: ")
    assert f"{graded:.0f} of {len(cases)} cases graded" in verdict.error


def test_a_dev_set_is_committed_without_hidden_tags(tmp_path: Path) -> None:
    folder = copy_task(tmp_path / "tidyconf")
    repo = folder / "repo"
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(
            ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *argv],
            check=True,
            capture_output=True,
        )
    toml = folder / "task.toml"
    toml.write_text(
        toml.read_text().replace(
            "timeout = 120\n", 'timeout = 120\ndev_cases = "dev/cases.jsonl"\n'
        )
    )
    task = load_task(folder)
    spec = spec_of(task)
    frozen = freeze_cases(folder, repo, spec, pool=300, per_rule=5, seed=1, base=0, dev=20)
    assert frozen.dev_path == repo / "dev" / "cases.jsonl"
    tracked = subprocess.run(
        ["git", "-C", str(repo), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "dev/cases.jsonl" in tracked and "dev/cases.meta.json" in tracked
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert status == ""
    rows = [json.loads(line) for line in frozen.dev_path.read_text().splitlines()]
    assert len(rows) == 20 and all(set(row) == {"id", "input", "expected"} for row in rows)
    meta = frozen.dev_path.with_name("cases.meta.json").read_text()
    assert not any(rule in meta for rule in RULES)
    # A task that shows its tags gets each dev case's real bucket, not "base" for all.
    toml.write_text(
        toml.read_text().replace(
            'dev_cases = "dev/cases.jsonl"\n', 'dev_cases = "dev/cases.jsonl"\ndev_tags = true\n'
        )
    )
    task = load_task(folder)
    frozen = freeze_cases(folder, repo, spec_of(task), pool=300, per_rule=5, seed=1, base=0, dev=20)
    rows = [json.loads(line) for line in frozen.dev_path.read_text().splitlines()]
    assert all(
        row["bucket"] == (min(row["rules"], key=RULES.index) if row["rules"] else "base")
        for row in rows
    )
    assert len({row["bucket"] for row in rows}) > 1
