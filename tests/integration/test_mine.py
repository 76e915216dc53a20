"""Acceptance: a history with one commit of every kind gives exactly the expected tasks.

The project is plain Python tested with unittest through the copy's own ``.venv``, so mining
builds shared environments from requirements.txt (a local wheel stands in for a dependency: no
index is needed). Validation goes through the same grader as ``run``, and ``check`` then passes
on the suite it wrote.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.mining.suite_folder import default_suite_folder
from harnessdrive.tasks.loading import load_suite
from harnessdrive.testing.repo_builder import RepoBuilder
from harnessdrive.testing.wheels import make_wheel, wheel_name

pytestmark = pytest.mark.slow  # mines, checks and runs a whole history

TEST_COMMAND = ".venv/bin/python -m unittest discover -s tests -q"
TEST_TIMEOUT = 5

CALC = """\
def add(a, b):
    return a - b


def mul(a, b):
    return a + b


def sub(a, b):
    return a + b


def maximum(values):
    return values[0]


def old_api():
    return "old"
"""
GREET = wheel_name("greet", "1.0")


def unit_test(name: str, body: str, imports: str = "import calc") -> str:
    return (
        f"import unittest\n\n{imports}\n\n\nclass {name}(unittest.TestCase):\n"
        f"    def test_it(self):\n        {body}\n"
    )


def replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new)


def build_history(path: Path, counter: Path) -> dict[str, str]:
    """Every kind of commit, oldest first; returns the sha of each candidate by name."""
    repo = RepoBuilder(path)
    calc = CALC
    repo.commit(
        "Start the calculator",
        {
            "calc.py": calc,
            "requirements.txt": "# no dependencies yet\n",
            "tests/test_base.py": unit_test("Base", "self.assertTrue(callable(calc.add))"),
            "tests/test_old_api.py": unit_test("Old", "self.assertEqual(calc.old_api(), 'old')"),
        },
    )
    repo.commit("Document usage", {"README.md": "# calc\n", "docs/usage.md": "Add things.\n"})
    calc += "\n# tidied\n"
    repo.commit("Tidy calc", {"calc.py": calc})
    tables = {f"tables/t{i}.py": f"T = {i}\n" for i in range(30)}
    repo.commit("Generate tables", {**tables, "tests/test_tables.py": "T = 1\n"})
    sha: dict[str, str] = {}

    calc = replace(calc, "return a - b", "return a + b")
    sha["good-add"] = repo.commit(
        "Fix add\n\nIt subtracted.\n\nSigned-off-by: Dev <dev@example.com>",
        {
            "calc.py": calc,
            "tests/test_add.py": unit_test("Add", "self.assertEqual(calc.add(2, 3), 5)"),
        },
    )

    calc += "\n# identity is fine\n"
    sha["passes-before"] = repo.commit(
        "Test the identity of add",
        {
            "calc.py": calc,
            "tests/test_identity.py": unit_test("Id", "self.assertEqual(calc.add(0, 0), 0)"),
        },
    )

    # The fix itself is flaky: right the first time it runs, wrong the second time.
    flaky_calc = calc + (
        "\n\ndef neg(x):\n"
        f"    import pathlib\n    counter = pathlib.Path({str(counter)!r})\n"
        "    runs = int(counter.read_text()) + 1 if counter.exists() else 1\n"
        "    counter.write_text(str(runs))\n"
        "    return -x if runs == 1 else x\n"
    )
    sha["flaky"] = repo.commit(
        "Add neg",
        {
            "calc.py": flaky_calc,
            "tests/test_neg.py": unit_test("Neg", "self.assertEqual(calc.neg(2), -2)"),
        },
    )
    calc += "\n\ndef neg(x):\n    return -x\n"
    repo.commit("Make neg plain", {"calc.py": calc})

    # The fix hangs: its test runs past the time limit.
    slow_calc = (
        calc
        + "\n\ndef total(values):\n    import time\n    time.sleep(60)\n    return sum(values)\n"
    )
    sha["slow"] = repo.commit(
        "Add total",
        {
            "calc.py": slow_calc,
            "tests/test_total.py": unit_test("Total", "self.assertEqual(calc.total([1, 2]), 3)"),
        },
    )
    calc += "\n\ndef total(values):\n    return sum(values)\n"
    repo.commit("Make total fast", {"calc.py": calc})

    # A new dependency: the fix only passes in an environment built from the new requirements.
    calc += "\n\ndef hello():\n    import greet\n    return greet.hello()\n"
    sha["dependency"] = repo.commit(
        "Say hello through greet",
        {
            f"wheels/{GREET}": make_wheel(
                "greet", "1.0", {"greet/__init__.py": "def hello():\n    return 'hi'\n"}
            ),
            "requirements.txt": f"./wheels/{GREET}\n",
            "calc.py": calc,
            "tests/test_hello.py": unit_test("Hello", "self.assertEqual(calc.hello(), 'hi')"),
        },
    )

    # The commit deletes a test along with the code it tested.
    calc = replace(
        calc, '\n\ndef old_api():\n    return "old"\n', '\n\ndef new_api():\n    return "new"\n'
    )
    sha["removes-a-test"] = repo.commit(
        "Replace old_api with new_api",
        {
            "calc.py": calc,
            "tests/test_new_api.py": unit_test("New", "self.assertEqual(calc.new_api(), 'new')"),
        },
        delete=["tests/test_old_api.py"],
    )

    # The commit's own test fails even with the commit: a broken commit.
    sha["fails-with-fix"] = repo.commit(
        "Add half",
        {
            "calc.py": calc + "\n\ndef half(x):\n    return x // 2\n",
            "tests/test_half.py": unit_test("Half", "self.assertEqual(calc.half(3), 1.5)"),
        },
    )
    calc += "\n\ndef half(x):\n    return x / 2\n"
    repo.commit("Make half exact", {"calc.py": calc})

    # Requirements that cannot be installed at the parent: the environment does not build.
    repo.commit(
        "Pin a wheel that is not there",
        {"requirements.txt": "./wheels/missing-1.0-py3-none-any.whl\n"},
    )
    calc = replace(calc, "return a + b\n\n\ndef sub", "return a * b\n\n\ndef sub")
    sha["setup-fails"] = repo.commit(
        "Fix mul",
        {
            "calc.py": calc,
            "tests/test_mul.py": unit_test("Mul", "self.assertEqual(calc.mul(2, 3), 6)"),
        },
    )
    repo.commit("Unpin", {"requirements.txt": f"./wheels/{GREET}\n"})

    # A file name too long for the file system: the parent cannot be copied.
    repo.commit("Add a long name", {"data/" + "n" * 300 + ".txt": "x\n"})
    calc = replace(calc, "def sub(a, b):\n    return a + b", "def sub(a, b):\n    return a - b")
    sha["cannot-copy"] = repo.commit(
        "Fix sub",
        {
            "calc.py": calc,
            "tests/test_sub.py": unit_test("Sub", "self.assertEqual(calc.sub(5, 3), 2)"),
        },
    )
    repo.commit("Drop the long name", delete=["data/" + "n" * 300 + ".txt"])

    calc = replace(calc, "return values[0]", "return max(values)")
    sha["good-max"] = repo.commit(
        "Fix maximum",
        {
            "calc.py": calc,
            "tests/test_max.py": unit_test("Max", "self.assertEqual(calc.maximum([1, 3, 2]), 3)"),
        },
    )
    repo.checkout()
    repo.close()
    return sha


Mined = tuple[Path, dict[str, str], dict[str, Any]]


def mine_the_history(root: Path) -> dict[str, Any]:
    repo = root / "calc"
    sha = build_history(repo, root / "flaky-runs")
    argv = [
        "mine", str(repo), "--since", "2000-01-01", "--validate", "--jobs", "2",
        "--test-cmd", TEST_COMMAND, "--test-timeout", str(TEST_TIMEOUT), "--json",
        "--sandbox", "none",  # the flaky fix counts its runs in a file outside the copy
    ]  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "harnessdrive", *argv], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return {"repo": str(repo), "sha": sha, "summary": json.loads(result.stdout)}


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Mined:
    """Mined once per test session, even when several test workers share this module."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        found = mine_the_history(tmp_path_factory.mktemp("mine"))
    else:
        shared = tmp_path_factory.getbasetemp().parent / "mine-acceptance"
        shared.mkdir(exist_ok=True)
        with (shared / "lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            done = shared / "result.json"
            if not done.exists():
                done.write_text(json.dumps(mine_the_history(shared)))
            found = json.loads(done.read_text())
    return Path(found["repo"]), found["sha"], found["summary"]


def test_exactly_the_good_commits_are_kept_newest_first(mined: Mined) -> None:
    _, sha, summary = mined
    kept = [task["commit"] for task in summary["tasks"]]
    assert kept == [sha["good-max"], sha["removes-a-test"], sha["dependency"], sha["good-add"]]
    assert all(task["validated"] for task in summary["tasks"])


def test_every_skip_and_rejection_reason_is_counted(mined: Mined) -> None:
    _, sha, summary = mined
    counts = summary["counts"]
    assert counts["commits"] == 21
    assert counts["candidates"] == 10
    assert counts["skipped"] == {
        "first commit": 1,
        "too large": 1,
        "no source changes": 5,
        "no test changes": 4,
    }
    assert counts["checked"] == 10 and counts["validated"] == 4
    assert counts["rejected"] == {
        "tests pass before the fix": 1,
        "tests fail with the fix": 1,
        "flaky": 1,
        "tests time out with the fix": 1,
        "setup command failed": 1,
        "could not copy the commit": 1,
    }
    reasons = {task["commit"]: task["reason"] for task in summary["rejected_tasks"]}
    assert reasons == {
        sha["passes-before"]: "tests pass before the fix",
        sha["fails-with-fix"]: "tests fail with the fix",
        sha["flaky"]: "flaky",
        sha["slow"]: "tests time out with the fix",
        sha["setup-fails"]: "setup command failed",
        sha["cannot-copy"]: "could not copy the commit",
    }
    # A flaky rejection says which run changed its mind, what it found and where its log is.
    [flaky] = [t for t in summary["rejected_tasks"] if t["commit"] == sha["flaky"]]
    assert re.fullmatch(
        r"(\w+): .*, the second time: (\d+ of \d+ tests passed|exit status \d+)"
        r" \(log: logs/\w+/\1/grade-tests.log\)",
        flaky["detail"],
    ), flaky["detail"]
    suite = Path(summary["tasks_file"])
    assert (suite / flaky["detail"].rsplit("(log: ", 1)[1].rstrip(")")).is_file()


def test_the_fast_check_rejected_the_commit_whose_tests_already_passed(mined: Mined) -> None:
    _, sha, summary = mined
    good = next(t for t in summary["tasks"] if t["commit"] == sha["good-add"])
    # Its own tests failed alone (twice): that is the whole suite failing before the fix, so
    # only the first run with the fix takes the whole suite; its repeat is its own tests.
    ran = {label for label, run in good["check"].items() if run is not None}
    assert ran == {"focused", "after", "focused_again", "focused_after"}
    assert good["check"]["focused"]["exit_code"] != 0
    assert good["check"]["focused_again"]["exit_code"] != 0
    assert good["check"]["after"]["exit_code"] == 0
    assert good["check"]["focused_after"]["exit_code"] == 0


def test_environments_are_built_once_per_manifest_set_and_reused(mined: Mined) -> None:
    repo, _, summary = mined
    environments = summary["environments"]
    # requirements.txt had three contents; one of them cannot be installed.
    assert len(environments["built"]) == 2
    assert environments["reused"] > 10
    store = default_suite_folder(repo) / "envs"
    assert sorted(p.name for p in store.iterdir() if p.is_dir()) == sorted(environments["built"])


def test_the_suite_is_written_in_our_task_format(mined: Mined) -> None:
    repo, sha, summary = mined
    folder = default_suite_folder(repo)
    assert summary["tasks_file"] == str(folder)
    suite = load_suite(folder)
    assert [t.id for t in suite.tasks] == sorted(
        sha[n][:12] for n in ("good-max", "removes-a-test", "dependency", "good-add")
    )
    task = next(t for t in suite.tasks if t.id == sha["removes-a-test"][:12])
    spec = tomllib.loads((task.folder / "task.toml").read_text())
    parent = subprocess.run(
        ["git", "rev-parse", sha["removes-a-test"] + "~1"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    assert spec["repo"] == {"path": str(repo), "ref": parent}
    assert (spec["grade"]["kind"], spec["grade"]["command"]) == ("tests", TEST_COMMAND)
    assert spec["grade"]["removed"] == ["tests/test_old_api.py"]
    assert (
        "tests/**" not in spec["grade"]["restored"] and "**/tests/**" in spec["grade"]["restored"]
    )
    assert [h.target for h in task.hidden] == ["tests/test_new_api.py"]
    assert task.prompt.startswith("Make the change described below in this repository.\n\n")
    assert "Change request:\nReplace old_api with new_api\n\nWhen you finish" in task.prompt
    assert f"run the tests with this command: {TEST_COMMAND}\n" in task.prompt
    patch = (task.folder / "solution" / "solution.patch").read_text()
    assert "+++ b/calc.py" in patch and "tests/" not in patch
    good = next(t for t in suite.tasks if t.id == sha["good-add"][:12])
    assert "Signed-off-by" not in good.prompt and "It subtracted." in good.prompt
    markdown = (folder / "summary.md").read_text()
    assert markdown.startswith("**Found 4 tasks in your git history: 4 of 10 checked commits")


def test_the_repository_is_left_untouched(mined: Mined) -> None:
    repo, _, _ = mined
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored=no"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout == ""


def test_check_passes_on_the_mined_suite(mined: Mined) -> None:
    repo, _, _ = mined
    assert run_cli(["check", str(default_suite_folder(repo)), "--sandbox", "none"]) == 0
