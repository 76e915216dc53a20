from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harnessdrive.mining import (
    Candidate,
    file_contents,
    gold_patch,
    hidden_test_contents,
    hidden_test_patch,
    scan_history,
)
from harnessdrive.mining.contents import diff_between
from harnessdrive.mining.message import split_message
from harnessdrive.testing.repo_builder import Executable, RepoBuilder, Symlink, builder_env
from harnessdrive.workspace.names import name_from_json as path_from_json
from harnessdrive.workspace.names import name_to_json as path_to_json

ALL = "2000-01-01"
OPS = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


@pytest.mark.parametrize(
    ("message", "subject", "body"),
    [
        ("Fix add", "Fix add", ""),
        ("Fix add\n", "Fix add", ""),
        ("  Fix add  \n\n\n", "Fix add", ""),
        ("Fix add\n\nIt subtracted.", "Fix add", "It subtracted."),
        (
            "Fix add\n\nIt subtracted.\n\nCo-Authored-By: A <a@example.com>\n"
            "Signed-off-by: B <b@example.com>\n",
            "Fix add",
            "It subtracted.",
        ),
        ("Fix add\n\nSigned-off-by: B <b@example.com>", "Fix add", ""),
        # Every closing paragraph of trailers goes (Gerrit's Change-Id, then co-authors).
        (
            "Fix add\n\nIt subtracted.\n\nChange-Id: I0123abcd\n\nCo-authored-by: A <a@x.org>",
            "Fix add",
            "It subtracted.",
        ),
        # A GitHub squash merge: its bullets stay, the review debris and the rule go.
        (
            "Fix add (#7)\n\n* Fix add\n\nIt subtracted.\n\nFixes #6\n\n"
            "* Apply suggestions from code review\n\nCo-authored-by: Bot <b@x.org>\n\n"
            "* Test the negative case\n\n---------\n\nCo-authored-by: A <a@x.org>\n"
            "Co-authored-by: B <b@x.org>",
            "Fix add (#7)",
            "* Fix add\n\nIt subtracted.\n\nFixes #6\n\n* Test the negative case",
        ),
        ("Fix add\n\nBody.\n\n---", "Fix add", "Body."),
        # Only the last paragraph, and only when every line is a trailer.
        (
            "Fix add\n\nCloses: #1\n\nWhy it matters.\n",
            "Fix add",
            "Closes: #1\n\nWhy it matters.",
        ),
        (
            "Fix add\n\nFirst.\n\nReviewed-by: C <c@example.com>\nsee the thread",
            "Fix add",
            "First.\n\nReviewed-by: C <c@example.com>\nsee the thread",
        ),
        # A folded trailer continues on an indented line.
        (
            "Fix add\n\nBody.\n\nCo-authored-by: A Long Name\n  <a@example.com>",
            "Fix add",
            "Body.",
        ),
        ("Fix add\n\nNote:no space is no trailer", "Fix add", "Note:no space is no trailer"),
        ("Fix add\r\n\r\nWindows body.\r\n", "Fix add", "Windows body."),
        ("Fix add\n\nOne.\n  \nTwo.", "Fix add", "One.\n\nTwo."),
        ("Fix add\nsecond line\n\nBody.", "Fix add", "second line\n\nBody."),
        ("", "", ""),
    ],
)
def test_task_text_from_a_commit_message(message: str, subject: str, body: str) -> None:
    assert split_message(message) == (subject, body)


# --- reading a candidate's files ------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit(
        "Initial",
        {
            "src/ops.py": OPS,
            "tests/test_old.py": "old\n",
            "bin/run": Executable("#!/bin/sh\necho 1\n"),
            b"data/caf\xe9.bin": b"\x00\x01\x02",
        },
    )
    repo.commit(
        "Fix add\n\nIt subtracted.",
        {
            "src/ops.py": FIXED,
            "tests/test_ops.py": TEST,
            "tests/link.py": Symlink("test_ops.py"),
            "bin/run": Executable("#!/bin/sh\necho 2\n"),
            b"data/caf\xe9.bin": b"\x00\x01\x02\x03\xff",
        },
        delete=["tests/test_old.py"],
    )
    return repo


@pytest.fixture
def candidate(repo: RepoBuilder) -> Candidate:
    [candidate] = scan_history(repo.path, since=ALL).candidates
    return candidate


def test_hidden_test_contents(repo: RepoBuilder, candidate: Candidate) -> None:
    assert hidden_test_contents(repo.path, candidate) == {
        "tests/link.py": b"test_ops.py",
        "tests/test_ops.py": TEST.encode(),
        "tests/test_old.py": None,
    }
    assert candidate.change("tests/link.py").new_mode == "120000"


def test_file_contents_at_the_parent(repo: RepoBuilder, candidate: Candidate) -> None:
    paths = ["src/ops.py", "tests/test_ops.py", "tests/test_old.py", "data/caf\udce9.bin"]
    assert file_contents(repo.path, candidate, paths, side="parent") == {
        "src/ops.py": OPS.encode(),
        "tests/test_ops.py": None,
        "tests/test_old.py": b"old\n",
        "data/caf\udce9.bin": b"\x00\x01\x02",
    }


def _git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=builder_env(), input=stdin, capture_output=True, check=True
    ).stdout


def _tree_at(cwd: Path, commit: str, paths: list[str]) -> bytes:
    return _git(cwd, "ls-tree", "-r", commit, "--", *paths)


def test_gold_and_hidden_patches_rebuild_the_commit(
    repo: RepoBuilder, candidate: Candidate, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    _git(tmp_path, "clone", "-q", str(repo.path), str(copy))
    _git(copy, "checkout", "-q", candidate.parent)
    gold = gold_patch(repo.path, candidate)
    hidden = hidden_test_patch(repo.path, candidate)
    assert b"GIT binary patch" in gold
    assert b"tests/" not in gold and b"src/ops.py" not in hidden
    _git(copy, "apply", "--index", "-", stdin=gold)
    _git(copy, "apply", "--index", "-", stdin=hidden)
    tree = _git(copy, "write-tree").strip().decode()
    assert tree == _git(copy, "rev-parse", f"{candidate.commit}^{{tree}}").strip().decode()
    assert candidate.gold_files == ["bin/run", "data/caf\udce9.bin", "src/ops.py"]


def test_patch_paths_are_literal(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "repo")
    repo.commit("Initial", {"src/a.py": OPS, "src/*.py": OPS})
    repo.commit("Both", {"src/a.py": FIXED, "src/*.py": FIXED, "tests/test_a.py": TEST})
    [candidate] = scan_history(repo.path, since=ALL).candidates
    patch = diff_between(repo.path, candidate, ["src/*.py"])
    assert b"a/src/*.py" in patch and b"src/a.py" not in patch


def test_no_files_no_patch(repo: RepoBuilder, candidate: Candidate) -> None:
    assert diff_between(repo.path, candidate, []) == b""


def test_the_prompt_comes_with_the_candidate(candidate: Candidate) -> None:
    prompt = candidate.prompt("pytest -q")
    assert "Change request:\nFix add\n\nIt subtracted.\n\nWhen you finish" in prompt
    assert prompt.endswith("complete the change.\n")


# --- JSON form ------------------------------------------------------------------------------


def test_candidates_round_trip_through_json(candidate: Candidate) -> None:
    text = candidate.model_dump_json()
    assert "caf\\u0000e9.bin" in text
    assert Candidate.model_validate_json(text) == candidate


@given(st.binary(min_size=1).filter(lambda b: b"\0" not in b))
def test_any_file_name_survives_json(raw: bytes) -> None:
    path = os.fsdecode(raw)
    encoded = path_to_json(path)
    encoded.encode("utf-8")  # always valid UTF-8
    assert path_from_json(encoded) == path
    assert os.fsencode(str(path_from_json(encoded))) == raw


@pytest.mark.parametrize("path", ["src/a.py", "ünïcode/ß.py", "emoji/🙂.txt", "tab\there"])
def test_utf8_names_are_stored_as_they_are(path: str) -> None:
    assert path_to_json(path) == path
