from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.mining import (
    DetectedCommand,
    MiningCounts,
    MiningSummary,
    RunRecord,
    SummaryTask,
    agent_prompt,
    render_summary_json,
    render_summary_markdown,
    scan_history,
    summary_from_scan,
)
from harnessdrive.mining.markdown import code, safe_text
from harnessdrive.mining.summary import format_duration
from harnessdrive.testing.repo_builder import RepoBuilder

PROMPT_WITH_BODY = """\
Make the change described below in this repository.

Change request:
Fix add() for negative numbers

add() subtracted its arguments.

Second paragraph.

When you finish, the repository's own tests will check your work. Test files you edit are put \
back first, so change the code, not the tests. You can run the tests with this command: \
python3 -m pytest -q
Do not commit. No one will answer questions, so make reasonable choices and complete the change.
"""

PROMPT_WITHOUT_BODY = """\
Make the change described below in this repository.

Change request:
Fix add()

When you finish, the repository's own tests will check your work. Test files you edit are put \
back first, so change the code, not the tests. You can run the tests with this command: npm test
Do not commit. No one will answer questions, so make reasonable choices and complete the change.
"""


def test_prompt_with_a_body() -> None:
    body = "add() subtracted its arguments.\n\nSecond paragraph."
    prompt = agent_prompt("Fix add() for negative numbers", body, "python3 -m pytest -q")
    assert prompt == PROMPT_WITH_BODY


def test_prompt_without_a_body() -> None:
    assert agent_prompt("Fix add()", "", "npm test") == PROMPT_WITHOUT_BODY


def test_the_instructions_paragraph_is_one_line() -> None:
    prompt = agent_prompt("S", "", "make test")
    [line] = [x for x in prompt.splitlines() if x.startswith("When you finish")]
    assert line.endswith("You can run the tests with this command: make test")


def test_braces_in_a_request_are_kept() -> None:
    assert "Use {name} and {}\n" in agent_prompt("Use {name} and {}", "", "t")


# --- markdown ------------------------------------------------------------------------------


def task(n: int, subject: str = "Fix add", validated: bool = False) -> SummaryTask:
    sha = f"{n:x}" * 40
    return SummaryTask(
        id=sha[:12],
        commit=sha[:40],
        subject=subject,
        hidden_tests=["tests/test_a.py", "tests/test_b.py"][: 1 + n % 2],
        gold_files=["src/a.py"],
        gold_lines=10 * n,
        validated=validated,
    )


def summary(**changes: object) -> MiningSummary:
    base: dict[str, object] = {
        "repo": "/repo",
        "head": "f" * 40,
        "since": "365d",
        "since_description": "365 days ago",
        "test_cmd": "python3 -m pytest -q",
        "test_cmd_source": "pyproject.toml",
        "counts": MiningCounts(
            commits=40,
            candidates=2,
            skipped={"no test changes": 30, "too large": 2, "first commit": 1,
                     "no source changes": 5},
        ),
        "tasks": [task(1), task(2)],
        "tasks_file": ".harnessdrive/tasks/repo",
        "next_step": "harnessdrive estimate .harnessdrive/tasks/repo --harness a,b",
    }  # fmt: skip
    base.update(changes)
    return MiningSummary.model_validate(base)


UNCHECKED = """\
**Found 2 candidate tasks in your git history. None is checked yet: run again with --validate \
to keep only tasks whose tests fail before the change and pass after it.**

Test command: `python3 -m pytest -q` (pyproject.toml).

| # | Task | Change | Hidden test files | Lines in the original fix | Checked |
|---|---|---|---|---|---|
| 1 | 1111111 | `Fix add` | 2 | 10 | no |
| 2 | 2222222 | `Fix add` | 1 | 20 | no |

History since 365 days ago: 40 commits, 2 change both source and test files. Skipped: \
30 no test changes, 5 no source changes, 2 too large, 1 first commit.

Suite: `.harnessdrive/tasks/repo`
"""


def test_markdown_before_any_check() -> None:
    assert render_summary_markdown(summary()) == UNCHECKED


CHECKED = """\
**Found 1 task in your git history: 1 of 4 checked commits fail their tests before the change \
and pass after it, twice.**

Test command: `npm test` (package.json scripts.test). It passes at HEAD in 1 min 5 s.

| # | Task | Change | Hidden test files | Lines in the original fix | Checked |
|---|---|---|---|---|---|
| 1 | 1111111 | `Fix add` | 2 | 10 | yes |

History since 2026-01-15: 1 commit, 1 changes both source and test files.
Checked 4 in fresh copies of the repository: 1 kept, 2 tests pass before the fix, 1 flaky. \
Checking took 2 h 3 min.

Suite: `tasks/repo`
Next: `harnessdrive estimate tasks/repo --harness a,b` shows the number of runs and a cost range.
"""


def test_markdown_after_a_check() -> None:
    checked = summary(
        since="2026-01-15",
        since_description="2026-01-15",
        test_cmd="npm test",
        test_cmd_source="package.json scripts.test",
        head_check=RunRecord(exit_code=0, seconds=65.2),
        counts=MiningCounts(
            commits=1,
            candidates=1,
            checked=4,
            validated=1,
            rejected={"flaky": 1, "tests pass before the fix": 2},
        ),
        validation_seconds=7390,
        tasks=[task(1, validated=True)],
        tasks_file="tasks/repo",
        next_step="harnessdrive estimate tasks/repo --harness a,b",
    )
    assert render_summary_markdown(checked) == CHECKED


def test_markdown_with_no_candidates() -> None:
    empty = summary(
        counts=MiningCounts(commits=3, candidates=0, skipped={"no test changes": 3}),
        tasks=[],
        tasks_file=None,
    )
    assert render_summary_markdown(empty) == (
        "**Found no candidate tasks in your git history since 365 days ago.**\n\n"
        "Test command: `python3 -m pytest -q` (pyproject.toml).\n\n"
        "History since 365 days ago: 3 commits, 0 change both source and test files."
        " Skipped: 3 no test changes.\n"
    )


def test_an_empty_window_names_the_newest_commit_and_where_to_reach() -> None:
    empty = summary(counts=MiningCounts(commits=0, candidates=0), tasks=[], head_date="2025-06-14")
    assert render_summary_markdown(empty).startswith(
        "**Found no candidate tasks in your git history since 365 days ago. The newest commit is"
        " from 2025-06-14: reach further back with --since (a date such as 2024-06-14, or a"
        " number of days).**\n"
    )
    leap = summary(counts=MiningCounts(commits=0, candidates=0), tasks=[], head_date="2024-02-29")
    assert "such as 2023-02-28" in render_summary_markdown(leap)


def test_markdown_when_no_checked_commit_was_kept() -> None:
    none_kept = summary(
        counts=MiningCounts(
            commits=9, candidates=3, checked=3, rejected={"tests fail with the fix": 3}
        ),
        tasks=[],
        validation_seconds=42,
    )
    text = render_summary_markdown(none_kept)
    assert text.startswith(
        "**Found no usable tasks: none of 3 checked commits fails its tests before the change"
        " and passes after it, twice.**\n"
    )
    assert "Checked 3 in fresh copies of the repository: 0 kept, 3 tests fail with the fix." in text
    assert "Checking took 42 s." in text
    assert "Next:" not in text and "| # |" not in text
    # The folder mining wrote still holds the summary and each commit's logs: say where.
    assert text.endswith(
        "No suite (no task was kept); its summary and logs: `.harnessdrive/tasks/repo`\n"
    )


def test_markdown_mentions_a_shallow_clone() -> None:
    assert "shallow clone" in render_summary_markdown(summary(shallow=True))
    assert "shallow" not in render_summary_markdown(summary())


def test_untrusted_text_stays_inside_its_code_span() -> None:
    hostile = "Fix `x` | drop table\n# Heading\n![p](https://evil.example/p.png)"
    text = render_summary_markdown(summary(tasks=[task(1, subject=hostile)]))
    [row] = [line for line in text.splitlines() if line.startswith("| 1 |")]
    assert row.count("|") == 7 and row.count("`") == 2
    assert "\n# Heading" not in text
    assert "`Fix 'x' / drop table # Heading ![p](https://evil.example/p.png)`" in row


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("", "`(empty)`"),
        ("a\tb\r\nc", "`a b c`"),
        ("x" * 80, "`" + "x" * 67 + "...`"),
        ("caf\udce9", "`caf\ufffd`"),
        (
            "see https://user:hunter2@db.example.com/x",
            "`see https://user:[REDACTED]@db.example.com/x`",
        ),
        ("token ghp_" + "a" * 36, "`token [REDACTED]`"),
        ("Authorization: Bearer abcdefghijklmnop", "`Authorization: Bearer [REDACTED]`"),
    ],
)
def test_code_spans(text: str, shown: str) -> None:
    assert code(text, 70) == shown
    code(text).encode("utf-8")


def test_safe_text_is_one_line() -> None:
    assert safe_text("a\u2028b\x00c") == "a b c"


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(None, "0 s"), (0.4, "0.4 s"), (9.96, "10 s"), (45, "45 s"), (59.6, "1 min 0 s"),
     (185, "3 min 5 s"), (3600, "1 h 0 min"), (7440, "2 h 4 min")],
)  # fmt: skip
def test_durations(seconds: float | None, shown: str) -> None:
    assert format_duration(seconds) == shown


# --- from a scan, and as JSON -----------------------------------------------------------------


@pytest.fixture
def scanned(tmp_path: Path) -> MiningSummary:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": "a = 0\n"})
    for i in range(1, 4):
        repo.commit(
            f"Change {i}",
            {"src/a.py": f"a = {i}\n", f"tests/test_{i}.py": "", b"src/caf\xe9.py": f"{i}"},
        )
    scan = scan_history(repo.path, since="2000-01-01")
    return summary_from_scan(
        scan, DetectedCommand("make test", "Makefile test target"), max_tasks=2
    )


def test_a_summary_from_a_scan_lists_the_newest_candidates(scanned: MiningSummary) -> None:
    assert [t.subject for t in scanned.tasks] == ["Change 3", "Change 2"]
    assert scanned.counts == MiningCounts(commits=4, candidates=3, skipped={"first commit": 1})
    assert scanned.test_cmd_source == "Makefile test target"
    assert not any(t.validated for t in scanned.tasks)
    assert scanned.head_check is None and scanned.validation_seconds is None
    assert "| 2 | " in render_summary_markdown(scanned)


def test_the_json_form(scanned: MiningSummary) -> None:
    data = json.loads(render_summary_json(scanned))
    assert set(data) >= {"repo", "head", "test_cmd", "test_cmd_source", "head_check", "counts",
                         "validation_seconds", "tasks", "tasks_file"}  # fmt: skip
    assert set(data["counts"]) == {
        "commits", "candidates", "skipped", "checked", "validated", "rejected", "weak", "drift",
    }  # fmt: skip
    assert set(data["tasks"][0]) == {
        "id", "commit", "subject", "hidden_tests", "gold_files", "gold_lines", "validated",
        "check", "prompt_problems", "unstated", "prompt_rewritten",
    }  # fmt: skip
    assert data["tasks"][0]["gold_files"] == ["src/a.py", "src/caf\x00e9.py"]
    assert MiningSummary.model_validate_json(render_summary_json(scanned)) == scanned


def test_the_summary_refuses_unknown_fields() -> None:
    with pytest.raises(ValueError, match="extra"):
        summary(surprise=1)
