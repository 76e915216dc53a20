"""Acceptance: commits whose prompt nobody could grade fairly are set aside with their reason.

Every commit here is a good task by its tests; three have prompts too weak to grade (merge
boilerplate, an empty one, a chat session link) and one's test demands an exact message its
prompt never gives. They are set aside before any test runs, listed with the reason, and
``--keep-weak`` checks and keeps them too. ``--prompt-cmd`` rewrites the kept tasks' requests.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from harnessdrive.mining.mine import MineOptions, mine
from harnessdrive.testing.repo_builder import RepoBuilder

pytestmark = pytest.mark.slow  # mines a history more than once

TEST_COMMAND = "python3 -m unittest discover -s tests -q"


def unit_test(name: str, check: str, module: str = "calc") -> str:
    return (
        f"import unittest\n\nimport {module} as calc\n\n\nclass {name}(unittest.TestCase):\n"
        f"    def test_it(self):\n        {check}\n"
    )


def build(path: Path) -> dict[str, str]:
    repo = RepoBuilder(path)
    names = ("good", "merge", "empty", "chat", "message")
    start = {f"calc_{n}.py": "VALUE = 0\n" for n in names}
    repo.commit("Start", {**start, "tests/test_base.py": unit_test("Base", "pass", "calc_good")})
    subjects = {
        "good": ("Set the value to one", ""),
        "merge": ("Merge commit from fork", ""),
        "empty": ("fix", ""),
        "chat": ("Port the value", "The plan: https://chatgpt.com/share/0d1e2f"),
        "message": ("Check the value", ""),
    }
    checks = {n: "self.assertEqual(calc.VALUE, 1)" for n in names}
    checks["message"] = (
        "with self.assertRaisesRegex(ValueError, 'value must be one, got two'):\n"
        "            calc.check(2)"
    )
    code = {n: "VALUE = 1\n" for n in names}
    code["message"] = (
        "VALUE = 1\n\n\ndef check(v):\n    if v != 1:\n"
        "        raise ValueError('value must be one, got two')\n"
    )
    sha = {}
    for name in names:
        subject, body = subjects[name]
        message = subject + (f"\n\n{body}" if body else "")
        sha[name] = repo.commit(
            message,
            {f"calc_{name}.py": code[name], f"tests/test_{name}.py": unit_test(
                name.title(), checks[name], f"calc_{name}")},
        )  # fmt: skip
    repo.checkout()
    repo.close()
    return sha


def options(tmp_path: Path, **more: object) -> MineOptions:
    given: dict[str, object] = {
        "repo": tmp_path / "calc",
        "since": "2000-01-01",
        "test_command": TEST_COMMAND,
        "validate": True,
        "test_timeout": 30,
        "output": tmp_path / "suite",
    }
    return MineOptions(**{**given, **more})  # type: ignore[arg-type]


def test_weak_prompts_are_set_aside_with_their_reason_and_keep_weak_brings_them_back(
    tmp_path: Path,
) -> None:
    sha = build(tmp_path / "calc")
    result = mine(options(tmp_path), sandbox="none", python=sys.executable)
    summary = result.summary
    assert [t.commit for t in summary.tasks] == [sha["good"]]
    aside = {t.commit: t.detail for t in summary.weak_tasks}
    assert aside == {
        sha[
            "message"
        ]: "tests pin exception type ValueError; tests pin message 'value must be one, got two'",
        sha["chat"]: "links to a chat session the agent cannot open",
        sha["empty"]: "empty prompt",
        sha["merge"]: "merge boilerplate",
    }
    assert summary.counts.weak == 4 and summary.counts.checked == 1
    markdown = (tmp_path / "suite" / "summary.md").read_text()
    assert "Set aside 4 commits whose prompt is too weak to grade fairly" in markdown

    kept = mine(
        options(tmp_path, keep_weak=True, fresh=True), sandbox="none", python=sys.executable
    )
    assert {t.commit for t in kept.summary.tasks} == set(sha.values())
    assert kept.summary.weak_tasks == []
    by_commit = {t.commit: t for t in kept.summary.tasks}
    assert by_commit[sha["merge"]].prompt_problems == ["merge boilerplate"]
    assert by_commit[sha["message"]].unstated == [
        "exception type ValueError",
        "message 'value must be one, got two'",
    ]
    task = tomllib.loads(
        (tmp_path / "suite" / "tasks" / sha["merge"][:12] / "task.toml").read_text()
    )
    assert task["metadata"]["prompt_quality"] == {
        "weak": True,
        "problems": ["merge boilerplate"],
        "unstated": [],
    }


def test_a_prompt_command_rewrites_the_kept_requests(tmp_path: Path) -> None:
    sha = build(tmp_path / "calc")
    rewrite = "tr a-z A-Z; echo; printf 'commit %s' \"$HARNESSDRIVE_COMMIT\""
    result = mine(
        # no --test-timeout: the tasks get one derived from HEAD's time
        options(tmp_path, prompt_command=rewrite, max_tasks=1, test_timeout=None),
        sandbox="none",
        python=sys.executable,
    )
    assert [t.prompt_rewritten for t in result.summary.tasks] == [True]
    task = tomllib.loads(
        (tmp_path / "suite" / "tasks" / sha["good"][:12] / "task.toml").read_text()
    )
    assert "SET THE VALUE TO ONE\ncommit " + sha["good"] in task["prompt"]
    assert task["metadata"]["original_request"] == "Set the value to one"
    assert task["grade"]["timeout"] == 60 == result.summary.test_timeout  # HEAD took < 6 s
