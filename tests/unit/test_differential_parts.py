"""The differential grader's parts, without a sandbox: the static allowlist, bucket filling,
``cases build``, the minimiser, claims, the oracle service and validity."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.demo import DEMO_SUITE
from harnessdrive.grading.claims import check_claims, invalid_verdict
from harnessdrive.grading.differential.casesets import CaseBuildError, CaseRow, fill_buckets
from harnessdrive.grading.differential.minimise import shrink
from harnessdrive.grading.differential.service import URL_VARIABLE, agent_run_watch
from harnessdrive.grading.differential.spec import (
    DifferentialGradeSpec,
    GeneratorSpec,
    OracleSpec,
)
from harnessdrive.grading.differential.static_check import check_candidate
from harnessdrive.tasks.loading import load_task
from harnessdrive.tasks.models import GradeSpec

TASK = DEMO_SUITE / "tasks" / "skiplist"


def findings(tmp_path: Path, source: str, **others: str) -> list[str]:
    (tmp_path / "cand.py").write_text(source)
    for name, text in others.items():
        (tmp_path / f"{name}.py").write_text(text)
    found, _ = check_candidate(tmp_path, "cand")
    return [f"{f.path}:{f.detail}" for f in found]


@pytest.mark.parametrize(
    "source",
    [
        "from os import system\n",
        "import os.path\n",  # binds os itself
        "import ctypes\n",
        "import multiprocessing\n",
        "import subprocess\n",
        "import importlib\n",
        "x = __import__('os')\n",
        "import fnmatch\nfnmatch.os.system('id')\n",
        "from fnmatch import os\n",
        "import re\ngetattr(re, 'enum')\n",
        "def f():\n    return f.__globals__\n",
        "import socket\n",
        "from urllib import request\n",
        "def f():\n    return getattr(f, '__glo' + 'bals__')\n",  # a computed name
        "def f():\n    return getattr(f, '__globals__')\n",
    ],
)
def test_the_allowlist_refuses_every_way_to_a_forbidden_module(tmp_path, source) -> None:
    assert findings(tmp_path, source)


def test_allowed_modules_and_names_pass(tmp_path) -> None:
    source = (
        "import re, json\nfrom os.path import join\nfrom collections import abc, Counter\n"
        "import collections.abc\nfrom os import path\nre.compile('x')\n"
        "top = getattr(Counter(), 'most_common')\n"
    )
    assert findings(tmp_path, source) == []


def test_own_modules_are_followed_and_compiled_ones_refused(tmp_path) -> None:
    assert findings(tmp_path, "import helper\n", helper="import ctypes\n") == [
        "helper.py:imports ctypes, which is not on the allowlist"
    ]
    (tmp_path / "sneaky.cpython-311.so").write_bytes(b"\0")
    assert findings(tmp_path, "import sneaky\n") == [
        "cand.py:loads compiled code sneaky.cpython-311.so in place of source"
    ]


def row(name: str, *rules: str) -> CaseRow:
    return CaseRow(id=name, input={}, expected=[], rules=rules)


def test_buckets_take_single_rule_cases_first_and_no_case_twice() -> None:
    pool = [
        row("ab1", "a", "b"),
        row("a1", "a"),
        row("b1", "b"),
        row("ab2", "a", "b"),
        row("a2", "a"),
        row("base1"),
        row("base2"),
    ]
    chosen, unused = fill_buckets(pool, ["a", "b"], 2)
    buckets = {(r.bucket, r.id) for r in chosen}
    assert buckets == {
        ("b", "b1"),
        ("b", "ab1"),
        ("a", "a1"),
        ("a", "a2"),
        ("base", "base1"),
        ("base", "base2"),
    }
    assert len({r.id for r in chosen}) == len(chosen)
    assert [r.id for r in unused] == ["ab2"]


def test_buckets_take_cases_that_measure_their_rule_alone_first() -> None:
    alone = CaseRow(id="a-alone", input={}, expected=[], rules=("a",), isolated=True)
    base = CaseRow(id="base-alone", input={}, expected=[], isolated=True)
    pool = [row("ab1", "a", "b"), row("a1", "a"), alone, row("base1"), base]
    chosen, _ = fill_buckets(pool, ["a"], 1)
    assert [(r.bucket, r.id) for r in chosen] == [("a", "a-alone"), ("base", "base-alone")]


def test_an_isolated_case_depends_on_its_rule_alone() -> None:
    from harnessdrive.grading.differential.oracle import Oracle

    spec = load_task(TASK).spec.grade
    assert isinstance(spec, DifferentialGradeSpec)
    oracle = Oracle(TASK, spec.oracle)
    # Braces alone decide it: with or without the other rules, the same answer.
    braces = {"patterns": ["*.{log,md}"], "files": ["a.log", "b.md", "c.py"]}
    # Braces and case: its answer depends on how both are done.
    both = {"patterns": ["*.{LOG,md}"], "files": ["a.log", "b.md"]}
    assert (oracle.rules_of(braces), oracle.isolates(braces, ("braces",))) == (("braces",), True)
    assert oracle.rules_of(both) == ("braces", "nocase")
    assert oracle.isolates(both, ("braces", "nocase")) is False
    plain = {"patterns": ["*.py"], "files": ["a.py", "b.log"]}
    assert (oracle.rules_of(plain), oracle.isolates(plain, ())) == ((), True)


def test_a_bucket_that_cannot_be_filled_says_so() -> None:
    with pytest.raises(CaseBuildError, match="the bucket 'b' has only 1 of the 2 cases"):
        fill_buckets([row("a1", "a"), row("b1", "b"), row("a2", "a")], ["a", "b"], 2)


@pytest.fixture
def task_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "skiplist"
    shutil.copytree(TASK, copy)
    return copy


def test_cases_build_freezes_tagged_buckets_with_their_meta(task_copy, capsys) -> None:
    argv = ["cases", "build", str(task_copy), "--pool", "200", "--per-rule", "5", "--seed", "3"]
    assert run_cli(argv) == 0
    hidden = task_copy / "cases" / "hidden.jsonl"
    rows = [json.loads(line) for line in hidden.read_text().splitlines()]
    meta = json.loads((task_copy / "cases" / "hidden.meta.json").read_text())
    assert (meta["seed"], meta["profile"], meta["oracle_version"]) == (
        3,
        "realistic",
        "skiplist 1.0",
    )
    assert meta["buckets"] == {"comments": 5, "braces": 5, "nocase": 5, "base": 5}
    assert meta["isolated"] == {
        bucket: sum(r["isolated"] for r in rows if r["bucket"] == bucket)
        for bucket in meta["buckets"]
    }
    assert len(rows) == 20 and len({r["id"] for r in rows}) == 20
    for found in rows:
        assert (found["bucket"] in found["rules"]) or (
            found["bucket"] == "base" and not found["rules"]
        )
    first = hidden.read_bytes()
    assert run_cli(argv) == 0
    assert hidden.read_bytes() == first  # the seed decides everything


def test_cases_build_dev_writes_a_visible_set_the_hidden_one_never_uses(task_copy, capsys) -> None:
    toml = task_copy / "task.toml"
    toml.write_text(
        toml.read_text().replace(
            'cases = "cases/hidden.jsonl"\n',
            ('cases = "cases/hidden.jsonl"\ndev_cases = "dev/cases.jsonl"\n'),
        )
    )
    argv = ["cases", "build", str(task_copy), "--pool", "200", "--per-rule", "5", "--seed", "1"]
    assert run_cli([*argv, "--dev", "30"]) == 0
    dev = [
        json.loads(line) for line in (task_copy / "repo/dev/cases.jsonl").read_text().splitlines()
    ]
    hidden = [
        json.loads(line) for line in (task_copy / "cases/hidden.jsonl").read_text().splitlines()
    ]
    assert (len(dev), len(hidden)) == (30, 20)
    assert (task_copy / "repo/dev/cases.meta.json").is_file()
    # Neither a hidden case's id nor its input is ever shown, even when made twice.
    assert not {r["id"] for r in dev} & {r["id"] for r in hidden}
    assert not {json.dumps(r["input"], sort_keys=True) for r in dev} & {
        json.dumps(r["input"], sort_keys=True) for r in hidden
    }
    oracle = load_task(task_copy)
    assert isinstance(oracle.spec.grade, DifferentialGradeSpec)
    from harnessdrive.grading.differential.oracle import Oracle

    answers = Oracle(task_copy, oracle.spec.grade.oracle)
    assert all(r["expected"] == answers.answer(r["input"]) for r in dev)  # the oracle's answers
    # The hidden set is the one a build without --dev makes: the dev set takes nothing from it.
    first = (task_copy / "cases/hidden.jsonl").read_bytes()
    assert run_cli(argv) == 0
    assert (task_copy / "cases/hidden.jsonl").read_bytes() == first
    without = task_copy / "no-dev"
    shutil.copytree(TASK, without)
    capsys.readouterr()
    assert (
        run_cli(["cases", "build", str(without), "--pool", "300", "--per-rule", "5", "--dev", "3"])
        == 2
    )
    assert "a dev set needs 'dev_cases'" in capsys.readouterr().err


def test_cases_build_refuses_bad_input_in_one_line(task_copy, capsys) -> None:
    capsys.readouterr()
    argv = ["cases", "build", str(task_copy), "--pool", "10", "--per-rule", "5"]
    assert run_cli(argv) == 2
    err = capsys.readouterr().err
    assert "raise the pool" in err and "Traceback" not in err
    assert run_cli(["cases", "build", str(DEMO_SUITE / "tasks" / "top-products")]) == 2


def test_cases_build_says_in_one_line_that_the_oracle_failed(task_copy, capsys) -> None:
    oracle = task_copy / "oracle" / "skiplist_oracle.py"
    oracle.write_text(oracle.read_text() + "\n\ndef answer(case, off):\n    raise KeyError(1)\n")
    capsys.readouterr()
    assert run_cli(["cases", "build", str(task_copy), "--pool", "5", "--per-rule", "1"]) == 2
    err = capsys.readouterr().err
    assert "the oracle failed on a case: KeyError" in err and "Traceback" not in err
    assert "build again to resume" in err


def test_shrink_reaches_a_one_minimal_case_and_counts_tries() -> None:
    case = {"patterns": ["p1", "x", "p3", "p4"], "files": ["f1", "f2", "y", "f4", "f5"]}
    calls: list[int] = []

    def disagrees(cases):
        calls.append(len(cases))
        return ["x" in c["patterns"] and "y" in c["files"] for c in cases]

    shrunk = shrink(case, ["patterns", "files"], disagrees)
    assert shrunk.case == {"patterns": ["x"], "files": ["y"]}
    assert (shrunk.size_before, shrunk.size_after) == (9, 2)
    assert shrunk.tries == sum(calls) > 0


def test_a_claim_of_identity_is_false_at_eighty_percent() -> None:
    message = "I fuzzed it: identical on 5,000 random cases. It handles braces too."
    claims = check_claims(
        message,
        passed=False,
        score=0.8,
        rule_rates={"braces": 1.0, "nocase": 0.0},
        rule_words={"braces": ["braces"]},
    )
    assert [(c.kind, c.holds) for c in claims] == [
        ("matches-reference", False),
        ("handles-rule", True),
    ]
    right = check_claims("All tests pass.", passed=True, score=1.0, rule_rates={})
    assert [(c.kind, c.holds) for c in right] == [("tests-pass", True)]
    assert check_claims("I rewrote the parser.", passed=False, score=0.2, rule_rates={}) == ()


def test_the_oracle_serves_only_during_the_agents_run() -> None:
    task = load_task(TASK)
    case = {"patterns": ["*.{log,md}"], "files": ["a.log", "b.py"]}
    with agent_run_watch(task) as watch:
        url = watch.env[URL_VARIABLE]
        body = json.dumps(case).encode()
        with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=5) as reply:
            assert json.loads(reply.read()) == ["a.log"]
        with pytest.raises(urllib.error.HTTPError) as bad:
            urllib.request.urlopen(urllib.request.Request(url, data=b"{nope"), timeout=5)
        assert bad.value.read() == b'{"error": "bad request"}'  # nothing of the host
    assert watch.problem is None
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=5)


def test_an_oracle_that_dies_makes_the_trial_invalid_and_uncounted() -> None:
    task = load_task(TASK)
    with agent_run_watch(task) as watch:
        assert watch.server is not None and watch.thread is not None
        watch.server.shutdown()  # as if the oracle's server had died under the agent
        watch.thread.join()
    assert watch.problem == "the oracle server died during the agent's run"
    verdict = invalid_verdict(watch.problem)
    assert verdict.outcome == "not_graded" and verdict.error == f"invalid: {watch.problem}"


@pytest.mark.parametrize("model", [DifferentialGradeSpec, OracleSpec, GeneratorSpec])
def test_every_differential_key_is_documented(model) -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "differential.md").read_text()
    own = [name for name in model.model_fields if name not in GradeSpec.model_fields]
    assert [n for n in own if f"{n} =" not in text and f"[grade.{n}]" not in text] == []
